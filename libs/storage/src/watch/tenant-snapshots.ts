import { LRUCache } from 'lru-cache';
import type { ChangeObserver } from './watch-cache.js';

/** Options of {@link TenantSnapshots}. */
export interface TenantSnapshotsOptions<T> {
  /** Reads a tenant's state afresh (a list at the newest revision). */
  load(tenant: string): Promise<T>;
  /** Read a cached tenant's state again in the background as soon as a change outdates it (else: at its next use). */
  reloadOnChange?: boolean;
  /** Background reload failures (the next use retries). */
  onError?: (err: unknown, tenant: string) => void;
  /** At most this many tenants are kept (least recently used go first). Default 10,000. */
  maxTenants?: number;
  /** Tenants unused for this long are forgotten. Default 10 minutes. */
  idleMs?: number;
}

interface Snapshot<T> {
  value: T;
  /** The change counter when the read that produced it started. */
  loadedAt: number;
}

/**
 * Per-tenant snapshots of state read from PostgreSQL and kept current by
 * the change stream instead of polling: a change of the observed resource
 * (see {@link observer}) outdates the tenant's snapshot, and the next
 * {@link get} reads it again. A read that started before a change never
 * passes for current after it, so once this replica's stream has applied
 * revision R, every later `get` reflects R (read-your-writes when the
 * writer waited for its revision to be applied). Concurrent reads of one
 * tenant are shared. Bounded: least recently used and idle tenants are
 * forgotten.
 */
export class TenantSnapshots<T extends object> {
  private readonly entries: LRUCache<string, Snapshot<T>>;
  /** The counter value of each tenant's newest change; evicted tenants count as changed at `floor`. */
  private readonly changedAt: LRUCache<string, number>;
  private readonly inflight = new Map<string, { loadedAt: number; promise: Promise<T> }>();
  private counter = 0;
  private floor = 0;

  constructor(private readonly opts: TenantSnapshotsOptions<T>) {
    const max = opts.maxTenants ?? 10_000;
    this.entries = new LRUCache({ max, ttl: opts.idleMs ?? 10 * 60_000, updateAgeOnGet: true });
    this.changedAt = new LRUCache({
      max: max * 4,
      dispose: (v, _k, reason) => {
        if (reason === 'evict') this.floor = Math.max(this.floor, v);
      },
    });
  }

  /** The tenant's snapshot, read afresh when missing or outdated by a change. Rejects when the read fails. */
  get(tenant: string): Promise<T> {
    const need = this.changedAt.get(tenant) ?? this.floor;
    const hit = this.entries.get(tenant);
    if (hit && need <= hit.loadedAt) return Promise.resolve(hit.value);
    const running = this.inflight.get(tenant);
    if (running && need <= running.loadedAt) return running.promise;
    return this.read(tenant);
  }

  /** The tenant's last snapshot, current or not, without reading; undefined when none is cached. */
  peek(tenant: string): T | undefined {
    return this.entries.peek(tenant)?.value;
  }

  /** Tenants with a cached snapshot. */
  tenants(): string[] {
    return [...this.entries.keys()];
  }

  /** A change of the tenant's observed objects was applied: its snapshot is outdated. */
  invalidate(tenant: string): void {
    this.changedAt.set(tenant, ++this.counter);
    if (this.opts.reloadOnChange && this.entries.has(tenant)) this.background(tenant);
  }

  /** Every snapshot is outdated (the change stream restarted). */
  invalidateAll(): void {
    this.floor = ++this.counter;
    this.changedAt.clear();
    if (this.opts.reloadOnChange) for (const t of this.entries.keys()) this.background(t);
  }

  /** Drops the tenant's snapshot (it was deleted): nothing of it is served again, and it is not reloaded until asked. */
  drop(tenant: string): void {
    this.changedAt.set(tenant, ++this.counter);
    this.entries.delete(tenant);
  }

  /** Feeds this cache from the change stream: each change outdates its tenant, a reset outdates all, a retired tenant is dropped. */
  readonly observer: ChangeObserver = {
    onChange: (change) => this.invalidate(change.key.tenant),
    onReset: () => this.invalidateAll(),
    onTenantRetired: (tenant) => this.drop(tenant),
  };

  private background(tenant: string): void {
    this.get(tenant).catch((err) => this.opts.onError?.(err, tenant));
  }

  private read(tenant: string): Promise<T> {
    const loadedAt = this.counter;
    const promise = this.opts.load(tenant).then((value) => {
      const current = this.entries.peek(tenant);
      if (!current || current.loadedAt <= loadedAt) this.entries.set(tenant, { value, loadedAt });
      return value;
    });
    const settle = () => {
      if (this.inflight.get(tenant)?.promise === promise) this.inflight.delete(tenant);
    };
    promise.then(settle, settle);
    this.inflight.set(tenant, { loadedAt, promise });
    return promise;
  }
}
