import type { CacheSubscriber, ChangeObserver, ChangeSource, WatchCache } from '@plinth/storage';

/** The tenant of a subscriber's bucket (WatchCache.bucketKey: tenant, NUL, resource). */
function tenantOfBucket(bucket: string): string {
  const i = bucket.indexOf('\u0000');
  return i < 0 ? bucket : bucket.slice(0, i);
}

interface Observation {
  resource: string;
  observer: ChangeObserver;
  stops: Map<string, () => void>;
}

/**
 * The change stream of every shard as one {@link ChangeSource}, for the
 * caches of other concerns: an observer of a resource follows it on every
 * shard (present and added later), each shard's changes in that shard's
 * revision order; a subscriber of one tenant's resource follows the cache
 * of the shard the tenant lives on. When a shard goes, its subscribers are
 * ended (they reload), and its observers are reset.
 */
export class ShardedChangeSource implements ChangeSource {
  private readonly caches = new Map<string, WatchCache>();
  private readonly observations = new Set<Observation>();
  /** Each subscriber's cache and the proxy subscribed there (which forgets it when that cache ends it). */
  private readonly subscribedOn = new Map<CacheSubscriber, { cache: WatchCache; proxy: CacheSubscriber }>();

  constructor(private readonly shardOf: (tenant: string) => string) {}

  /** Starts following shard `name`'s cache (its observers are fed from now on). */
  add(name: string, cache: WatchCache): void {
    this.remove(name);
    this.caches.set(name, cache);
    for (const o of this.observations) o.stops.set(name, cache.observe(o.resource, o.observer));
    for (const o of this.observations) o.observer.onReset();
  }

  /** Stops following shard `name`: observers are reset, its subscribers ended. */
  remove(name: string): void {
    const cache = this.caches.get(name);
    if (!cache) return;
    this.caches.delete(name);
    for (const o of this.observations) {
      o.stops.get(name)?.();
      o.stops.delete(name);
      o.observer.onReset();
    }
    for (const [sub, on] of this.subscribedOn) {
      if (on.cache !== cache) continue;
      this.subscribedOn.delete(sub);
      on.cache.unsubscribe(on.proxy);
      sub.onEnd(`shard ${name} is gone`);
    }
  }

  /** The cache of shard `name`, if this replica follows it. */
  cacheOf(name: string): WatchCache | undefined {
    return this.caches.get(name);
  }

  observe(resource: string, observer: ChangeObserver): () => void {
    const o: Observation = { resource, observer, stops: new Map() };
    for (const [name, cache] of this.caches) o.stops.set(name, cache.observe(resource, observer));
    this.observations.add(o);
    return () => {
      this.observations.delete(o);
      for (const stop of o.stops.values()) stop();
    };
  }

  subscribe(sub: CacheSubscriber): void {
    const cache = this.caches.get(this.shardOf(tenantOfBucket(sub.bucket)));
    if (!cache) {
      sub.onEnd('the shard of this tenant is not followed on this replica');
      return;
    }
    const proxy: CacheSubscriber = {
      bucket: sub.bucket,
      receivesUnreadable: sub.receivesUnreadable,
      onChange: (c) => sub.onChange(c),
      onEnd: (reason) => {
        this.subscribedOn.delete(sub);
        sub.onEnd(reason);
      },
    };
    this.subscribedOn.set(sub, { cache, proxy });
    cache.subscribe(proxy);
  }

  unsubscribe(sub: CacheSubscriber): void {
    const on = this.subscribedOn.get(sub);
    this.subscribedOn.delete(sub);
    on?.cache.unsubscribe(on.proxy);
  }

  /**
   * The tenant was deleted (or is being deleted): ends its subscribers (the
   * per-tenant caches they feed drop what they hold) and tells every
   * observer that keeps per-tenant state ({@link ChangeObserver.onTenantRetired}).
   * Synchronous: when it returns, nothing this replica keeps of the tenant
   * through the change stream survives.
   */
  retireTenant(tenant: string, reason: string): void {
    this.endTenant(tenant, reason);
    for (const o of this.observations) o.observer.onTenantRetired?.(tenant);
  }

  /** Ends the subscribers of `tenant` (its shard changed: they must follow the new one). */
  endTenant(tenant: string, reason: string): void {
    for (const [sub, on] of this.subscribedOn) {
      if (tenantOfBucket(sub.bucket) !== tenant) continue;
      this.subscribedOn.delete(sub);
      on.cache.unsubscribe(on.proxy);
      sub.onEnd(reason);
    }
  }
}
