import { LRUCache } from 'lru-cache';
import { type CacheSubscriber, type ChangeEvent, type ChangeSource, WatchCache } from '@plinth/storage';

/** Reads a namespace from storage; undefined when it does not exist. */
export type NamespaceReader = (tenant: string, name: string) => Promise<Record<string, unknown> | undefined>;

const MAX_NAMESPACES = 20_000;
/** How long lookups of a namespace go to storage after this replica admitted its deletion (upstream's forceLiveLookupTTL). */
const FORCE_LIVE_LOOKUP_MS = 30_000;

/**
 * Namespace objects for admission (NamespaceLifecycle's phase check,
 * policies' namespaceSelector and `namespaceObject`), kept per replica and
 * corrected by the change stream, as upstream's admission plugins read a
 * namespace informer: the first lookup in a tenant subscribes to the
 * tenant's namespace changes in the watch cache, and every change drops
 * that namespace's entry, so a relabelled or terminating namespace is seen
 * as soon as the change reaches the replica. A missing namespace is never
 * remembered. After this replica admits a namespace's deletion, lookups of
 * it go to storage for 30 s (upstream's forced live lookup), so content
 * created right after the DELETE is refused even before its change
 * arrives. Without a change stream (or after it broke) lookups go to storage.
 */
export class NamespaceCache {
  private readonly entries = new LRUCache<string, Record<string, unknown>>({ max: MAX_NAMESPACES });
  private readonly subscribed = new Map<string, CacheSubscriber>();
  /** Bumped on every namespace change of a tenant: a read that raced a change is not remembered. */
  private readonly epochs = new Map<string, number>();
  /** Namespaces whose deletion this replica admitted, until when their lookups go to storage. */
  private readonly liveUntil = new LRUCache<string, number>({ max: MAX_NAMESPACES });
  private changes: ChangeSource | undefined;

  constructor(private readonly read: NamespaceReader) {}

  /** Follows namespace changes through `changes` from now on. */
  attach(changes: ChangeSource): void {
    for (const sub of this.subscribed.values()) this.changes?.unsubscribe(sub);
    this.subscribed.clear();
    this.entries.clear();
    this.changes = changes;
  }

  /** Lookups of the namespace go to storage for a while: this replica is about to mark it terminating. */
  deleting(tenant: string, name: string): void {
    const key = `${tenant}\u0000${name}`;
    this.liveUntil.set(key, Date.now() + FORCE_LIVE_LOOKUP_MS);
    this.entries.delete(key);
  }

  /** The namespace object (shared; do not mutate), or undefined when it does not exist. */
  async get(tenant: string, name: string): Promise<Record<string, unknown> | undefined> {
    const key = `${tenant}\u0000${name}`;
    const live = this.liveUntil.get(key);
    if (live !== undefined) {
      if (Date.now() < live) return this.read(tenant, name);
      this.liveUntil.delete(key);
    }
    const hit = this.entries.get(key);
    if (hit) return hit;
    const following = this.follow(tenant);
    const epoch = this.epochs.get(tenant);
    const ns = await this.read(tenant, name);
    if (ns && following && this.subscribed.has(tenant) && this.epochs.get(tenant) === epoch && !this.liveUntil.has(key)) this.entries.set(key, ns);
    return ns;
  }

  private follow(tenant: string): boolean {
    if (this.subscribed.has(tenant)) return true;
    const changes = this.changes;
    if (!changes) return false;
    const sub: CacheSubscriber = {
      bucket: WatchCache.bucketKey(tenant, 'namespaces'),
      onChange: (c: ChangeEvent) => {
        this.epochs.set(tenant, (this.epochs.get(tenant) ?? 0) + 1);
        this.entries.delete(`${tenant}\u0000${c.key.name}`);
      },
      onEnd: () => {
        this.subscribed.delete(tenant);
        this.epochs.delete(tenant);
        for (const k of [...this.entries.keys()]) if (k.startsWith(`${tenant}\u0000`)) this.entries.delete(k);
      },
    };
    this.subscribed.set(tenant, sub);
    changes.subscribe(sub);
    return true;
  }
}
