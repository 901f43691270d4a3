import { once } from 'node:events';
import type { ServerResponse } from 'node:http';
import type { KubeObject } from '@plinth/apimachinery';
import { type ChangeEvent, type ChangeLogRepository, isStorageError, type WatchCache } from '@plinth/storage';
import { Bounded } from './bounded.js';
import { encodeCursor } from './view-cursor.js';

/** One shard a watch of the view follows, and the revision of it the watch starts after. */
export interface ViewWatchShard {
  name: string;
  cache: WatchCache;
  from: number;
}

/** A binding tenant the view addresses, and the shard it lives on. */
export interface AddressedTenant {
  tenant: string;
  shard: string;
}

/** What one watch of the view is made of. */
export interface ViewWatchOptions {
  /** The storage resource watched (the provider's CRD's, the same in every tenant). */
  resource: string;
  /** One namespace, or undefined for all. */
  namespace?: string;
  shards: ViewWatchShard[];
  /** The binding tenants addressed when the watch started (their digest is in every resourceVersion it sends). */
  tenants: string[];
  /** The binding tenants addressed now, with their shards (read at each change and each tick). */
  addressed(): AddressedTenant[];
  /** Whether a change of `tenant` belongs to the watch now. */
  bound(tenant: string): boolean;
  /** The shards that answer now, with their caches (one not followed yet ends the watch: its resume follows it). */
  followable(): ReadonlyMap<string, WatchCache>;
  /** The shard `tenant` lives on now. */
  shardOf(tenant: string): string;
  /** The revision from which `tenant`'s changes are in its shard's watch cache (0 unless it moved there). */
  liveSince(tenant: string): number;
  shardReady(shard: string): boolean;
  digest(tenants: readonly string[]): string;
  /** The watch's label and field selectors, and what else selects `tenant`'s objects. */
  matches(obj: KubeObject, tenant: string): boolean;
  /** The object as the provider sees it, with resourceVersion `rv`. */
  present(obj: KubeObject, tenant: string, rv: string): Promise<KubeObject>;
  /** kind and apiVersion of BOOKMARK events. */
  bookmarkType: { kind: string; apiVersion: string };
  changes: ChangeLogRepository;
  bookmarks: boolean;
  seconds: number;
  /** Tenants' change logs read at once on one shard while catching up (default 1); see bounded.ts. */
  perShard?: number;
  onClose(): void;
}

/** Changes read from the change log per tenant and turn when a shard's part is older than its watch cache's window. */
const CATCH_UP_BATCH = 500;
const TICK_MS = 1000;
const BOOKMARK_TICKS = 10;

/**
 * One watch of the provider's view across shards: each shard's changes in
 * that shard's revision order (from its change log while older than its
 * watch cache's window, then from the window and live), merged as they
 * come. Every event carries, as its object's resourceVersion, the vector
 * of per-shard revisions after it (see view-cursor.ts), so a watch resumed
 * from it restarts each shard after its own revision: nothing missed,
 * nothing repeated. Ends cleanly (the client resumes) when a shard stops
 * answering, when a tenant leaves the view (its binding deleted: the
 * resume is then 410 and the informer lists again) or lives on a shard the
 * watch does not follow, at the timeout, and at shutdown.
 */
export class ViewWatch {
  private readonly positions = new Map<string, number>();
  private readonly caches = new Map<string, WatchCache>();
  private readonly live = new Set<string>();
  private tenants: Set<string>;
  private digest: string;
  private chain: Promise<void> = Promise.resolve();
  private closed = false;
  private readonly stops: (() => void)[] = [];
  private readonly ticker: NodeJS.Timeout;
  private readonly deadline: NodeJS.Timeout;
  private ticks = 0;

  /** Starts following the shards at once (the 200 and headers must have been written). */
  constructor(
    private readonly res: ServerResponse,
    private readonly o: ViewWatchOptions,
  ) {
    for (const s of o.shards) {
      this.positions.set(s.name, s.from);
      this.caches.set(s.name, s.cache);
    }
    this.tenants = new Set(o.tenants);
    this.digest = o.digest(o.tenants);
    this.deadline = setTimeout(() => this.end(), o.seconds * 1000);
    this.ticker = setInterval(() => this.tick(), TICK_MS);
    res.on('close', () => this.end());
  }

  /** The resourceVersion of the position reached so far (with `object`: of that object's revision on its shard). */
  private cursor(object?: { shard: string; revision: number }): string {
    return encodeCursor({ shards: new Map(this.positions), tenants: this.digest, object });
  }

  /** Sends the objects of the snapshot the watch starts from as ADDED events (a watch without a resourceVersion). */
  sendInitial(items: { tenant: string; shard: string; obj: KubeObject; revision: number }[]): void {
    for (const i of items) this.enqueue('ADDED', i.obj, i.tenant, this.cursor({ shard: i.shard, revision: i.revision }));
  }

  /** Joins every shard's feed; returns at once. */
  follow(): void {
    for (const s of this.o.shards) void this.join(s);
  }

  /** Ends the stream cleanly: the client watches again from the last resourceVersion it saw. */
  end(): void {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.deadline);
    clearInterval(this.ticker);
    for (const stop of this.stops) stop();
    this.o.onClose();
    void this.chain.finally(() => this.res.end());
  }

  private write(line: unknown): void {
    if (!this.res.writableEnded && !this.res.destroyed) this.res.write(JSON.stringify(line) + '\n');
  }

  private enqueue(type: string, obj: KubeObject, tenant: string, rv: string): void {
    this.chain = this.chain
      .then(async () => {
        if (this.res.writableEnded) return;
        this.write({ type, object: await this.o.present(obj, tenant, rv) });
      })
      .catch(() => this.end());
  }

  /** Sends one change of `shard` if the watch selects it, as upstream's watch cache does with selectors (a change into or out of the selection is ADDED or DELETED). */
  private offer(shard: string, c: ChangeEvent): void {
    if (this.closed || c.revision <= (this.positions.get(shard) ?? Infinity)) return;
    if (c.key.resource !== this.o.resource || c.unreadable !== undefined) return;
    if (this.o.namespace !== undefined && c.key.namespace !== this.o.namespace) return;
    if (!this.o.bound(c.key.tenant) || this.o.shardOf(c.key.tenant) !== shard) return;
    const now = this.o.matches(c.object as KubeObject, c.key.tenant);
    const before = c.prevObject ? this.o.matches(c.prevObject as KubeObject, c.key.tenant) : false;
    let type: string = c.type;
    if (c.type === 'MODIFIED' && now !== before) type = now ? 'ADDED' : 'DELETED';
    else if (!now && !(c.type === 'MODIFIED' && before)) return;
    this.positions.set(shard, c.revision);
    this.enqueue(type, c.object as KubeObject, c.key.tenant, this.cursor({ shard, revision: c.revision }));
  }

  /**
   * Brings shard `s` from its position to its live feed: while the position
   * is older than the cache's window (or than a moved tenant's arrival),
   * each addressed tenant's part of the change log, merged in revision
   * order up to where every tenant's read reached (a tenant is read again
   * only once that is where its read ended, or, when none has a batch
   * left, once its read fell out of the window); then the window and the
   * live feed, joined in one tick so nothing slips between them, as soon as
   * every tenant's read reached the window ({@link joinWindow}).
   */
  private async join(s: ViewWatchShard): Promise<void> {
    const gate = new Bounded(Math.max(1, this.o.perShard ?? 1));
    /** Each tenant's last read of the change log: how far it reached, and its changes not sent yet. */
    const ahead = new Map<string, { scannedTo: number; events: ChangeEvent[]; full: boolean }>();
    try {
      for (;;) {
        if (this.closed) return;
        const pos = this.positions.get(s.name)!;
        const tenants = this.o.addressed().filter((a) => a.shard === s.name).map((a) => a.tenant);
        const floor = Math.max(0, ...tenants.map((t) => this.o.liveSince(t)));
        const cached = pos >= floor ? s.cache.since(pos) : undefined;
        if (cached) {
          for (const c of cached) this.offer(s.name, c);
          this.stops.push(s.cache.observe(this.o.resource, { onChange: (c) => this.offer(s.name, c), onReset: () => this.end() }));
          this.live.add(s.name);
          return;
        }
        if (tenants.length === 0) {
          // Nothing of this shard is addressed: no change older than the window can be sent.
          this.positions.set(s.name, Math.max(pos, s.cache.oldestResumable, floor));
          continue;
        }
        // Only tenants whose last read did not reach past the position are read again; the others' changes
        // beyond it wait in `ahead` (one statement per tenant and batch, at most `perShard` of them at once).
        const here = new Set(tenants);
        for (const t of [...ahead.keys()]) if (!here.has(t)) ahead.delete(t);
        // While no tenant has a batch of history left to read, reads that fell out of the window are read again too
        // (the window is joined once every tenant's read reached it); otherwise only the tenants the position waits for.
        const deep = tenants.some((t) => ahead.get(t)?.full);
        const behind = deep ? pos : Math.max(pos, s.cache.oldestResumable - 1);
        const stale = tenants.filter((t) => (ahead.get(t)?.scannedTo ?? -1) <= behind);
        await Promise.all(
          stale.map((tenant) =>
            gate.run(async () => {
              const r = await this.o.changes.changesInScope(pos, CATCH_UP_BATCH, { tenant, resource: this.o.resource, namespace: this.o.namespace });
              ahead.set(tenant, { scannedTo: r.scannedTo, events: r.events, full: r.events.length >= CATCH_UP_BATCH });
            }),
          ),
        );
        const upTo = Math.min(...tenants.map((t) => ahead.get(t)!.scannedTo));
        if (this.closed) return;
        if (upTo >= Math.max(s.cache.oldestResumable, floor)) {
          // Every tenant's read reached the window: go live now (each tenant's own reach; see joinWindow).
          this.joinWindow(s, pos, tenants, ahead, upTo);
          return;
        }
        const events: ChangeEvent[] = [];
        for (const t of tenants) {
          const held = ahead.get(t)!;
          const kept = held.events.filter((e) => e.revision > pos);
          events.push(...kept.filter((e) => e.revision <= upTo));
          held.events = kept.filter((e) => e.revision > upTo);
        }
        events.sort((a, b) => a.revision - b.revision);
        for (const e of events) this.offer(s.name, e);
        if (upTo > this.positions.get(s.name)!) this.positions.set(s.name, upTo);
        await this.drained();
      }
    } catch (err) {
      this.fail(err);
    }
  }

  /**
   * Joins shard `s`'s window and live feed right after a round of change-log
   * reads that each reached it (`reachedFrom`, the lowest reach, is at or
   * after the window's oldest revision), although at different revisions:
   * up to `U`, the newest revision the cache has applied, each addressed
   * tenant's changes come from its read up to where that read reached and
   * from the window after it; merged in revision order, they are offered,
   * then the live feed follows after `U`, in the same tick. Without this,
   * reads that reached different revisions would move the position only to
   * the lowest of them, and a catch-up under steady writes could trail the
   * head forever.
   */
  private joinWindow(s: ViewWatchShard, pos: number, tenants: string[], ahead: Map<string, { scannedTo: number; events: ChangeEvent[]; full: boolean }>, reachedFrom: number): void {
    const top = s.cache.revision;
    const window = s.cache.since(reachedFrom) ?? [];
    const events: ChangeEvent[] = [];
    for (const t of tenants) for (const e of ahead.get(t)!.events) if (e.revision > pos && e.revision <= top) events.push(e);
    for (const c of window) {
      const reach = ahead.get(c.key.tenant)?.scannedTo;
      // A tenant not read (not addressed when the round began) is offered what the window holds; offer() decides.
      if (reach === undefined || c.revision > reach) events.push(c);
    }
    events.sort((a, b) => a.revision - b.revision);
    for (const e of events) this.offer(s.name, e);
    if (top > this.positions.get(s.name)!) this.positions.set(s.name, top);
    this.stops.push(s.cache.observe(this.o.resource, { onChange: (c) => this.offer(s.name, c), onReset: () => this.end() }));
    this.live.add(s.name);
  }

  /** Waits until what was enqueued is written and the socket takes more. */
  private async drained(): Promise<void> {
    await this.chain;
    if (this.res.writableNeedDrain && !this.closed) await Promise.race([once(this.res, 'drain'), once(this.res, 'close')]);
  }

  /** Ends the stream with an ERROR event, as upstream does once the 200 was sent: 410 Expired when a shard's history is gone (the informer lists again). */
  private fail(err: unknown): void {
    if (this.closed) return;
    const expired = isStorageError(err, 'Expired');
    const unavailable = isStorageError(err, 'Unavailable');
    const message = err instanceof Error ? err.message : String(err);
    const status = expired
      ? { code: 410, reason: 'Expired', message }
      : unavailable
        ? { code: 503, reason: 'ServiceUnavailable', message }
        : { code: 500, reason: 'InternalError', message: `an error on the server ("${message}") has prevented the request from succeeding` };
    this.chain = this.chain.then(() => this.write({ type: 'ERROR', object: { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', ...status } }));
    this.end();
  }

  private tick(): void {
    if (this.closed) return;
    for (const shard of this.positions.keys()) if (!this.o.shardReady(shard)) return this.end();
    // A shard connected (or back) since the watch started: the resume follows it too.
    for (const shard of this.o.followable().keys()) if (!this.positions.has(shard)) return this.end();
    const addressed = this.o.addressed();
    // A tenant on a shard this watch does not follow (it moved, or bound there): the resume lists again.
    if (addressed.some((a) => !this.positions.has(a.shard))) return this.end();
    const now = new Set(addressed.map((a) => a.tenant));
    if (now.size !== this.tenants.size || [...now].some((t) => !this.tenants.has(t))) {
      // A tenant left (its binding was deleted): end, and resumes from this watch's resourceVersions get 410.
      if ([...this.tenants].some((t) => !now.has(t))) return this.end();
      // Tenants joined: their changes already flow; later events carry the new set's digest.
      this.tenants = now;
      this.digest = this.o.digest([...now]);
    }
    if (this.o.bookmarks && ++this.ticks % BOOKMARK_TICKS === 0) {
      // Every change up to a live shard's cache revision was offered (synchronously): a bookmark there loses nothing.
      for (const shard of this.live) this.positions.set(shard, Math.max(this.positions.get(shard)!, this.caches.get(shard)!.revision));
      const rv = this.cursor();
      this.chain = this.chain.then(() => this.write({ type: 'BOOKMARK', object: { ...this.o.bookmarkType, metadata: { resourceVersion: rv } } }));
    }
  }
}
