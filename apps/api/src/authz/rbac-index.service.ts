import { LRUCache } from 'lru-cache';
import { type CachedChange, type CacheSubscriber, type ChangeSource, type Storage, STORAGE, WatchCache } from '@plinth/storage';
import type { RbacIndexSource } from './rbac-authorizer.js';
import { RBAC_STORAGE_RESOURCES, TenantRbacIndex } from './rbac-index.js';

/** What the index service reads from. */
export interface RbacIndexDeps {
  /** The replica's watch cache (fed by the change stream every replica runs); read lazily since it is replaced on restart of the pipeline. */
  cache: () => ChangeSource;
  lists: Storage;
  /** The uid of a tenant as it exists now, undefined when it does not (a missing tenant gets an empty index, not a load). */
  tenantUid: (tenant: string) => Promise<string | undefined>;
  /** The uid of a tenant as known without a read (undefined: not known now; null: known absent); an index loaded for another uid is dropped. */
  peekTenantUid?: (tenant: string) => string | null | undefined;
  /** Tenants kept in memory at most; the least recently used is dropped and reloaded when next asked. */
  maxTenants?: number;
}

interface Loaded {
  /** The uid of the tenant the index was loaded for: a new tenant of the same name never sees it. */
  uid: string;
  index: TenantRbacIndex;
  promise: Promise<TenantRbacIndex>;
  ready: boolean;
  subscribers: CacheSubscriber[];
}

const EMPTY = new TenantRbacIndex();

/**
 * One in-memory RBAC index per tenant, loaded on first use (one list per
 * RBAC resource) and kept current by the change stream: it subscribes to
 * the tenant's four RBAC buckets of the watch cache before listing, then
 * applies every change above each list's revision, so it neither misses
 * nor repeats a change. A cache reset drops the index (reloaded on next
 * use), and so does the tenant's deletion (its subscriptions are ended) or
 * another uid under its name. At most `maxTenants` indexes are kept (LRU).
 */
export class RbacIndexService implements RbacIndexSource {
  private readonly tenants: LRUCache<string, Loaded>;

  constructor(private readonly deps: RbacIndexDeps) {
    this.tenants = new LRUCache<string, Loaded>({
      max: deps.maxTenants ?? 10_000,
      dispose: (entry) => this.unsubscribe(entry),
    });
  }

  /** How many tenant indexes are in memory. */
  get loadedTenants(): number {
    return this.tenants.size;
  }

  /** The loaded index of `tenant`, or undefined while it is not (yet) loaded. */
  peek(tenant: string): TenantRbacIndex | undefined {
    const e = this.current(tenant);
    return e?.ready ? e.index : undefined;
  }

  /** The index of `tenant`, loading it when needed; an empty index for a tenant that does not exist. Rejects when storage fails. */
  async get(tenant: string): Promise<TenantRbacIndex> {
    const e = this.current(tenant);
    if (e) return e.promise;
    const uid = await this.deps.tenantUid(tenant);
    if (uid === undefined) return EMPTY;
    const again = this.current(tenant);
    if (again?.uid === uid) return again.promise;
    if (again) this.tenants.delete(tenant);
    const entry: Loaded = { uid, index: new TenantRbacIndex(), promise: Promise.resolve(EMPTY), ready: false, subscribers: [] };
    entry.promise = this.load(tenant, entry).catch((err: unknown) => {
      if (this.tenants.peek(tenant) === entry) this.tenants.delete(tenant);
      throw err;
    });
    this.tenants.set(tenant, entry);
    return entry.promise;
  }

  /** The entry of `tenant`, unless the tenant is known (without a read) to be another one now, or gone: such an entry is dropped. */
  private current(tenant: string): Loaded | undefined {
    const e = this.tenants.get(tenant);
    if (!e) return undefined;
    const uid = this.deps.peekTenantUid?.(tenant);
    if (uid === undefined || uid === e.uid) return e;
    this.tenants.delete(tenant);
    return undefined;
  }

  /** Drops the index of `tenant` (e.g. the tenant was deleted); it is reloaded on next use. */
  forget(tenant: string): void {
    this.tenants.delete(tenant);
  }

  /** Drops every index (shutdown). */
  clear(): void {
    this.tenants.clear();
  }

  private async load(tenant: string, entry: Loaded): Promise<TenantRbacIndex> {
    const floors = new Map<string, number>();
    const pending: CachedChange[] = [];
    const apply = (c: CachedChange) => {
      const floor = floors.get(c.key.resource);
      if (floor === undefined || c.revision <= floor) return;
      if (c.type === 'DELETED') entry.index.remove(c.key.resource, c.key.namespace, c.key.name);
      else entry.index.put(c.key.resource, c.object);
    };
    const cache = this.deps.cache();
    for (const resource of RBAC_STORAGE_RESOURCES) {
      const sub: CacheSubscriber = {
        bucket: WatchCache.bucketKey(tenant, resource),
        onChange: (c) => (entry.ready ? apply(c) : pending.push(c)),
        onEnd: () => {
          if (this.tenants.peek(tenant) === entry) this.tenants.delete(tenant);
        },
      };
      entry.subscribers.push(sub);
      cache.subscribe(sub);
    }
    for (const resource of RBAC_STORAGE_RESOURCES) {
      const page = await this.deps.lists.list({ tenant, resource });
      for (const item of page.items) entry.index.put(resource, item.body);
      floors.set(resource, page.revision);
    }
    for (const c of pending) apply(c);
    entry.ready = true;
    return entry.index;
  }

  private unsubscribe(entry: Loaded): void {
    const cache = this.deps.cache();
    for (const s of entry.subscribers) cache.unsubscribe(s);
    entry.subscribers = [];
  }
}
