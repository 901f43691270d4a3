import { performance } from 'node:perf_hooks';
import type { ChangeEvent } from '../change-log.repository.js';

/**
 * A change as the watch cache holds it. One instance is shared by every
 * watcher of its resource; `encoded` memoizes serialized forms (keyed and
 * shaped by the HTTP layer, per encoding) so that watchers of one encoding
 * write the same bytes instead of each serializing the object again.
 */
export interface CachedChange extends ChangeEvent {
  encoded?: Map<object, (Buffer | undefined)[]>;
}

/** A live watcher as the cache sees it. */
export interface CacheSubscriber {
  /** {@link WatchCache.bucketKey} of the tenant and resource it watches. */
  readonly bucket: string;
  /** Receives every change of its bucket appended after it subscribed, in revision order. Must not throw. */
  onChange(change: CachedChange): void;
  /** The cache was reset or is shutting down: the stream it fed has a hole now, so the subscriber must end. */
  onEnd(reason: string): void;
  /**
   * True for a subscriber that is also given changes whose object could
   * not be decrypted (ChangeEvent.unreadable): a watch answers them with an
   * error. Caches that build state from objects leave it unset.
   */
  readonly receivesUnreadable?: boolean;
}

/**
 * Server-side state kept from the changes of one resource across tenants
 * (the CRD cache, the webhook configuration cache): every replica follows
 * the same change stream, so every replica's state converges, in revision
 * order, without polling PostgreSQL.
 */
export interface ChangeObserver {
  /** Called synchronously with every appended change of the observed resource, in revision order. Must not throw; should be cheap. */
  onChange(change: CachedChange): void;
  /** The cache restarted at a new revision (start-up, or a hole it could not fill): state derived from earlier changes must be rebuilt. */
  onReset(): void;
  /**
   * The tenant was deleted (or is being deleted): its rows are removed
   * without change rows, so state kept of it must be dropped now, lest a new
   * tenant of the same name inherit it. Observers that keep per-tenant state
   * implement it; others leave it unset (the change stream has nothing more
   * to say of the tenant). Must not throw.
   */
  onTenantRetired?(tenant: string): void;
}

/**
 * The per-replica window of recent changes (a ring of `capacity` entries)
 * and the live watchers it feeds. Changes are appended in strictly
 * increasing revision order; every change after {@link oldestResumable} up
 * to {@link revision} is in the window, so a watcher that has seen revision
 * R ≥ oldestResumable can join from it without touching PostgreSQL.
 *
 * Everything here is synchronous: a caller that reads {@link since} and
 * then {@link subscribe}s in the same tick cannot miss or repeat a change.
 */
/** The `resource` of {@link WatchCache.observe} that receives the changes of every resource. */
export const ALL_RESOURCES = '*';

export class WatchCache {
  private readonly ring: (CachedChange | undefined)[];
  private head = 0;
  private size = 0;
  private last = 0;
  private floor = 0;
  private readonly buckets = new Map<string, Set<CacheSubscriber>>();
  private subscribers = 0;
  private readonly observers = new Map<string, Set<ChangeObserver>>();
  private waiters: { revision: number; resolve: () => void }[] = [];

  /**
   * `onDispatched`, if given, is told after each change handed to at least
   * one subscriber: its revision, how many, and when the first got it
   * (performance.now()), for the fan-out metrics (and the change itself, for its trace span).
   */
  constructor(
    readonly capacity: number,
    private readonly onDispatched?: (revision: number, subscribers: number, startedAt: number, change: CachedChange) => void,
  ) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new Error(`watch cache capacity must be a positive integer, got ${capacity}`);
    this.ring = new Array(capacity);
  }

  /** The bucket of a tenant's resource (the storage resource, e.g. `/configmaps`). */
  static bucketKey(tenant: string, resource: string): string {
    return `${tenant}\u0000${resource}`;
  }

  /** The newest revision the cache has applied (0 before the first reset). */
  get revision(): number {
    return this.last;
  }

  /** The oldest revision a watcher may join from: every change after it is in the window. */
  get oldestResumable(): number {
    return this.floor;
  }

  /** How many changes the window holds. */
  get length(): number {
    return this.size;
  }

  /** How many watchers are subscribed. */
  get subscriberCount(): number {
    return this.subscribers;
  }

  /**
   * Empties the window and restarts it at `revision`. Every subscriber is
   * ended (with `reason`), since what it receives next would not continue
   * what it saw.
   */
  reset(revision: number, reason = 'watch cache reset'): void {
    this.ring.fill(undefined);
    this.head = 0;
    this.size = 0;
    this.last = revision;
    this.floor = revision;
    this.endAll(reason);
    for (const set of this.observers.values()) for (const o of set) o.onReset();
    this.wakeWaiters();
  }

  /** Ends every subscriber (e.g. at shutdown) without touching the window. */
  endAll(reason: string): void {
    const all = [...this.buckets.values()].flatMap((s) => [...s]);
    this.buckets.clear();
    this.subscribers = 0;
    for (const sub of all) sub.onEnd(reason);
  }

  /**
   * Appends one change and hands it to the subscribers of its bucket.
   * Throws when `change.revision` is not above {@link revision}: callers
   * must skip what the cache already has.
   */
  append(change: CachedChange): void {
    if (change.revision <= this.last) {
      throw new Error(`watch cache: revision ${change.revision} is not after ${this.last}`);
    }
    if (this.size === this.capacity) {
      const evicted = this.ring[this.head]!;
      this.floor = evicted.revision;
      this.ring[this.head] = change;
      this.head = (this.head + 1) % this.capacity;
    } else {
      this.ring[(this.head + this.size) % this.capacity] = change;
      this.size++;
    }
    this.last = change.revision;
    // Observers build state from objects; one that cannot be decrypted has none to give (watchers get an error instead).
    if (change.unreadable === undefined) this.notifyObservers(change);
    const subs = this.buckets.get(WatchCache.bucketKey(change.key.tenant, change.key.resource));
    if (subs) {
      const startedAt = this.onDispatched ? performance.now() : 0;
      const n = subs.size;
      for (const sub of subs) if (change.unreadable === undefined || sub.receivesUnreadable) sub.onChange(change);
      this.onDispatched?.(change.revision, n, startedAt, change);
    }
    if (this.waiters.length > 0) this.wakeWaiters();
  }

  private notifyObservers(change: CachedChange): void {
    const observers = this.observers.get(change.key.resource);
    if (observers) for (const o of observers) o.onChange(change);
    const everything = this.observers.get(ALL_RESOURCES);
    if (everything) for (const o of everything) o.onChange(change);
  }

  /**
   * Feeds `observer` with every change of `resource` (a storage resource,
   * e.g. `apiextensions.k8s.io/customresourcedefinitions`, or
   * {@link ALL_RESOURCES} for all of them) of any tenant
   * appended from now on, and with every reset. Returns the function that
   * stops it.
   */
  observe(resource: string, observer: ChangeObserver): () => void {
    let set = this.observers.get(resource);
    if (!set) this.observers.set(resource, (set = new Set()));
    set.add(observer);
    return () => {
      set.delete(observer);
      if (set.size === 0 && this.observers.get(resource) === set) this.observers.delete(resource);
    };
  }

  /**
   * Resolves once the cache has applied `revision` (at once when it has):
   * from then on every observer has seen that change. Never rejects; a
   * caller that must not wait forever races it with a timer.
   */
  whenApplied(revision: number): Promise<void> {
    if (revision <= this.last) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ revision, resolve }));
  }

  private wakeWaiters(): void {
    const ready = this.waiters.filter((w) => w.revision <= this.last);
    if (ready.length === 0) return;
    this.waiters = this.waiters.filter((w) => w.revision > this.last);
    for (const w of ready) w.resolve();
  }

  /**
   * The changes after `revision`, oldest first, or undefined when `revision`
   * is older than the window ({@link oldestResumable}). A revision at or
   * above {@link revision} gives an empty array.
   */
  since(revision: number): CachedChange[] | undefined {
    if (revision < this.floor) return undefined;
    if (revision >= this.last) return [];
    let lo = 0;
    let hi = this.size;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.at(mid).revision > revision) hi = mid;
      else lo = mid + 1;
    }
    const out: CachedChange[] = [];
    for (let i = lo; i < this.size; i++) out.push(this.at(i));
    return out;
  }

  /** Starts feeding `sub` with every change appended from now on. */
  subscribe(sub: CacheSubscriber): void {
    let set = this.buckets.get(sub.bucket);
    if (!set) this.buckets.set(sub.bucket, (set = new Set()));
    if (!set.has(sub)) {
      set.add(sub);
      this.subscribers++;
    }
  }

  /** Stops feeding `sub`. Safe to call from inside onChange and more than once. */
  unsubscribe(sub: CacheSubscriber): void {
    const set = this.buckets.get(sub.bucket);
    if (set?.delete(sub)) {
      this.subscribers--;
      if (set.size === 0) this.buckets.delete(sub.bucket);
    }
  }

  private at(i: number): CachedChange {
    return this.ring[(this.head + i) % this.capacity]!;
  }
}

/**
 * What the caches of other concerns follow (RBAC, namespaces, policies,
 * CRDs): observers of a resource across tenants, and subscribers of one
 * tenant's resource. A WatchCache is one; with several shards, a view over
 * every shard's cache is another.
 */
export type ChangeSource = Pick<WatchCache, 'observe' | 'subscribe' | 'unsubscribe'>;
