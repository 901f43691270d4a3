import type { Logger } from 'pino';
import { type CachedChange, type ChangeObserver, isStorageError, type KeyFieldRequirement, type ListResult, type StoredObject } from '@plinth/storage';

/** Follows one storage resource of every tenant on this replica's change feed (the shape of ObserveChanges in watch/). */
export type FollowResource = (resource: string, observer: ChangeObserver) => () => void;

/** Where an informer lists from and what it follows: the store's list, the tenants, and the change feed. */
export interface InformerSource {
  /** One page of a tenant's resource (Storage.list). */
  list(query: { tenant: string; resource: string; fieldRequirements?: KeyFieldRequirement[]; limit?: number; after?: ListResult['next']; atRevision?: number }): Promise<ListResult>;
  /** Objects per page of a list (default {@link LIST_PAGE_SIZE}). */
  pageSize?: number;
  /** Every tenant now (each shard's), for an informer across tenants. */
  tenants(): Promise<string[]>;
  /** The change feed (OBSERVE_CHANGES). */
  follow: FollowResource;
}

/** What an informer caches: one storage resource, of one tenant or of all of them, optionally only objects of one name. */
export interface InformerScope {
  /** The storage resource, e.g. `namespaces` or `certificates.k8s.io/certificatesigningrequests`. */
  resource: string;
  /** One tenant; undefined: every tenant of every shard this replica follows. */
  tenant?: string;
  /** Only objects of this name (a field selector on metadata.name, as upstream's tweakListOptions). */
  name?: string;
}

/** An object in an informer's cache. Shared by every reader: never mutate it. */
export type CachedObject = StoredObject;

/** The values an object is indexed under, for one index (client-go's IndexFunc). */
export type IndexFunc = (obj: CachedObject) => string[];

/** What an event handler is told (client-go's ResourceEventHandler). `old` is set for updates; for a resync update `old === object`. */
export interface InformerEvent {
  type: 'add' | 'update' | 'delete';
  object: CachedObject;
  old?: CachedObject;
}

/** A handler of an informer's events; must not throw (a throw is logged). */
export type InformerHandler = (event: InformerEvent) => void;

/** Options of {@link SharedInformer.addEventHandler}. */
export interface HandlerOptions {
  /** Re-deliver every cached object to this handler as an update (old === new) this often (client-go's resync period). */
  resyncPeriodMs?: number;
}

/** The index every informer has: `tenant/namespace` of the object. */
export const NAMESPACE_INDEX = 'namespace';
/** The index every informer has: the uid of each ownerReference. */
export const OWNER_UID_INDEX = 'owner-uid';

/** Index value of {@link NAMESPACE_INDEX}. */
export const namespaceIndexValue = (tenant: string, namespace: string): string => `${tenant}\u0000${namespace}`;

const byNamespace: IndexFunc = (o) => [namespaceIndexValue(o.key.tenant, o.key.namespace)];
const byOwnerUid: IndexFunc = (o) => {
  const refs = (o.body.metadata as { ownerReferences?: unknown } | undefined)?.ownerReferences;
  return Array.isArray(refs) ? refs.flatMap((r) => (typeof (r as { uid?: unknown })?.uid === 'string' ? [(r as { uid: string }).uid] : [])) : [];
};

const idOf = (tenant: string, namespace: string, name: string): string => `${tenant}\u0000${namespace}\u0000${name}`;

/** Objects per page of an informer's list (client-go's pager default). */
export const LIST_PAGE_SIZE = 500;

/** How long a failed list waits before it is tried again (doubling up to the cap). */
const RELIST_BACKOFF_MS = 200;
const RELIST_BACKOFF_MAX_MS = 10_000;

interface Registration {
  handler: InformerHandler;
  timer?: NodeJS.Timeout;
}

/**
 * client-go's SharedInformer in process: lists a resource (of one tenant,
 * or of every tenant) into a cache keyed by tenant/namespace/name, then
 * follows the change feed from each tenant's list revision, keeping the
 * cache current and telling its event handlers (add, update, delete) in
 * revision order per shard. The feed is subscribed before the list and
 * its changes held until the list is in: a change at or below the list
 * revision of its tenant is already in the list and is dropped, a later
 * one is applied, so nothing is lost or applied twice. When the feed has a
 * hole (its reset, the change stream's 410 Expired) or a paged list meets
 * a compacted revision (Expired), it lists again and replaces the cache:
 * objects gone are delivered as deletes, new ones as adds, the others as
 * updates. Indexes: {@link NAMESPACE_INDEX}, {@link OWNER_UID_INDEX} and
 * any given. Shared: {@link SharedInformerFactory} hands one per scope to
 * every controller, started by the first {@link acquire} and stopped by
 * the last {@link release}.
 *
 * Everything after the list is synchronous (as the feed is): a handler
 * added in the same tick as a read of the cache misses nothing.
 */
export class SharedInformer {
  private readonly items = new Map<string, CachedObject>();
  private readonly indexers: Map<string, IndexFunc>;
  /** index name → value → ids. */
  private readonly indices = new Map<string, Map<string, Set<string>>>();
  /** The revision each tenant was listed at: a change of the tenant at or below it is in the cache already. */
  private listedAt = new Map<string, number>();
  private readonly handlers = new Set<Registration>();
  private buffer: CachedChange[] | undefined;
  private stopFollowing: (() => void) | undefined;
  private synced = false;
  private syncWaiters: (() => void)[] = [];
  private users = 0;
  private listing: Promise<void> | undefined;
  private relistAgain = false;
  private retryTimer: NodeJS.Timeout | undefined;
  private failures = 0;
  /** Lists made (the initial one and every relist), for tests and metrics. */
  lists = 0;
  /** Lists of a tenant started over because a later page's revision was compacted (410 Expired). */
  expiredLists = 0;

  constructor(
    readonly scope: InformerScope,
    private readonly source: InformerSource,
    private readonly logger: Logger,
    indexers: Record<string, IndexFunc> = {},
  ) {
    this.indexers = new Map(Object.entries({ [NAMESPACE_INDEX]: byNamespace, [OWNER_UID_INDEX]: byOwnerUid, ...indexers }));
    for (const name of this.indexers.keys()) this.indices.set(name, new Map());
  }

  /** Adds an index (before the informer starts; the same function again is a no-op, another under a taken name throws). */
  addIndexer(name: string, fn: IndexFunc): void {
    if (this.indexers.get(name) === fn) return;
    if (this.indexers.has(name)) this.fail(`index "${name}" exists`);
    if (this.users > 0) this.fail(`index "${name}" added after start`);
    this.indexers.set(name, fn);
    this.indices.set(name, new Map());
  }

  private fail(message: string): never {
    throw new Error(`informer ${this.scope.resource}: ${message}`);
  }

  /** True once the first list is in the cache (client-go's HasSynced); false again after the last {@link release}. */
  hasSynced(): boolean {
    return this.synced;
  }

  /** Resolves once {@link hasSynced} (at once when it is). */
  whenSynced(): Promise<void> {
    if (this.synced) return Promise.resolve();
    return new Promise((resolve) => this.syncWaiters.push(resolve));
  }

  /** Starts the informer for one more user (the first starts following and listing). */
  acquire(): void {
    if (this.users++ > 0) return;
    this.buffer = [];
    this.stopFollowing = this.source.follow(this.scope.resource, {
      onChange: (c) => this.onChange(c),
      onReset: () => this.relist(),
      onTenantRetired: (tenant) => this.retire(tenant),
    });
    this.relist();
  }

  /** One user fewer; the last stops following and empties the cache. Resolves once a list in progress ended. */
  async release(): Promise<void> {
    if (this.users === 0 || --this.users > 0) return;
    this.stopFollowing?.();
    this.stopFollowing = undefined;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    await this.listing?.catch(() => undefined);
    if (this.users > 0) return;
    this.items.clear();
    for (const index of this.indices.values()) index.clear();
    this.listedAt = new Map();
    this.buffer = undefined;
    this.synced = false;
  }

  /**
   * Adds a handler: it is told of every cached object now (as adds, when
   * synced; else as the list brings them), then of every change. Returns
   * the function that removes it.
   */
  addEventHandler(handler: InformerHandler, options: HandlerOptions = {}): () => void {
    const reg: Registration = { handler };
    this.handlers.add(reg);
    if (this.synced) for (const o of this.items.values()) this.deliver(reg, { type: 'add', object: o });
    if (options.resyncPeriodMs) {
      reg.timer = setInterval(() => {
        if (this.synced) for (const o of [...this.items.values()]) this.deliver(reg, { type: 'update', object: o, old: o });
      }, options.resyncPeriodMs);
      reg.timer.unref();
    }
    return () => {
      if (reg.timer) clearInterval(reg.timer);
      this.handlers.delete(reg);
    };
  }

  /** The cached object, or undefined. */
  get(tenant: string, namespace: string, name: string): CachedObject | undefined {
    return this.items.get(idOf(tenant, namespace, name));
  }

  /** Cached objects, of one tenant (and namespace) when given. */
  list(tenant?: string, namespace?: string): CachedObject[] {
    if (tenant !== undefined && namespace !== undefined) return this.byIndex(NAMESPACE_INDEX, namespaceIndexValue(tenant, namespace));
    const all = [...this.items.values()];
    return tenant === undefined ? all : all.filter((o) => o.key.tenant === tenant);
  }

  /** Cached objects whose index `name` holds `value` (client-go's ByIndex); an unknown index throws. */
  byIndex(name: string, value: string): CachedObject[] {
    const index = this.indices.get(name) ?? this.fail(`no index "${name}"`);
    return [...(index.get(value) ?? [])].map((id) => this.items.get(id)!);
  }

  /** How many users hold it (controllers running that read from it). */
  get holders(): number {
    return this.users;
  }

  /** Objects in the cache. */
  get size(): number {
    return this.items.size;
  }

  private inScope(c: CachedChange): boolean {
    return (this.scope.tenant === undefined || c.key.tenant === this.scope.tenant) && (this.scope.name === undefined || c.key.name === this.scope.name);
  }

  private onChange(c: CachedChange): void {
    if (!this.inScope(c)) return;
    if (this.buffer) this.buffer.push(c);
    else this.apply(c);
  }

  /** Applies one change from the feed unless the cache has it already (its tenant's list or the object is at or past it). */
  private apply(c: CachedChange): void {
    const listed = this.listedAt.get(c.key.tenant);
    if (listed !== undefined && c.revision <= listed) return;
    const id = idOf(c.key.tenant, c.key.namespace, c.key.name);
    const old = this.items.get(id);
    if (old && old.revision >= c.revision) return;
    if (c.type === 'DELETED') {
      if (!old) return;
      this.remove(id, old);
      this.emit({ type: 'delete', object: { key: c.key, revision: c.revision, body: c.object } });
      return;
    }
    const object: CachedObject = { key: c.key, revision: c.revision, body: c.object };
    this.put(id, object, old);
    this.emit(old ? { type: 'update', object, old } : { type: 'add', object });
  }

  /** Lists again (coalesced with a list in progress, which then runs once more). */
  private relist(): void {
    if (this.users === 0) return;
    this.buffer ??= [];
    if (this.listing) {
      this.relistAgain = true;
      return;
    }
    this.listing = this.listOnce()
      .then(() => {
        this.failures = 0;
      })
      .catch((err: Error) => {
        const delay = Math.min(RELIST_BACKOFF_MAX_MS, RELIST_BACKOFF_MS * 2 ** this.failures++);
        this.logger.warn({ resource: this.scope.resource, err: err.message, retryInMs: delay }, 'informer: list failed; listing again');
        this.relistAgain = false;
        this.retryTimer = setTimeout(() => {
          this.retryTimer = undefined;
          this.relist();
        }, delay);
        this.retryTimer.unref();
      })
      .finally(() => {
        this.listing = undefined;
        if (this.relistAgain) {
          this.relistAgain = false;
          this.relist();
        }
      });
  }

  private async listOnce(): Promise<void> {
    this.lists++;
    const tenants = this.scope.tenant !== undefined ? [this.scope.tenant] : await this.source.tenants();
    const listed: CachedObject[] = [];
    const at = new Map<string, number>();
    for (const tenant of tenants) {
      at.set(tenant, await this.listTenant(tenant, listed));
      if (this.users === 0) return;
    }
    // A reset that came during the list: the list may hold what the hole lost, or not; list again rather than trust it.
    if (this.relistAgain || this.users === 0) return;
    this.replace(listed, at);
  }

  /** Every page of one tenant's resource at one revision; a compacted revision between pages (Expired) starts the tenant over. */
  private async listTenant(tenant: string, into: CachedObject[]): Promise<number> {
    const fieldRequirements: KeyFieldRequirement[] | undefined = this.scope.name !== undefined ? [{ field: 'metadata.name', operator: '=', value: this.scope.name }] : undefined;
    const limit = this.source.pageSize ?? LIST_PAGE_SIZE;
    for (;;) {
      const got: CachedObject[] = [];
      try {
        let page = await this.source.list({ tenant, resource: this.scope.resource, fieldRequirements, limit });
        got.push(...page.items);
        while (page.next) {
          page = await this.source.list({ tenant, resource: this.scope.resource, fieldRequirements, limit, after: page.next, atRevision: page.revision });
          got.push(...page.items);
        }
        into.push(...got);
        return page.revision;
      } catch (err) {
        if (!isStorageError(err, 'Expired')) throw err;
        this.expiredLists++;
      }
    }
  }

  /** Client-go's Replace: the cache becomes the list, then the changes held meanwhile are applied on top. */
  private replace(listed: CachedObject[], at: Map<string, number>): void {
    const held = this.buffer ?? [];
    this.buffer = undefined;
    this.listedAt = at;
    const fresh = new Set<string>();
    const events: InformerEvent[] = [];
    for (const object of listed) {
      const id = idOf(object.key.tenant, object.key.namespace, object.key.name);
      fresh.add(id);
      const old = this.items.get(id);
      this.put(id, object, old);
      events.push(old ? { type: 'update', object, old } : { type: 'add', object });
    }
    for (const [id, old] of [...this.items]) {
      if (fresh.has(id)) continue;
      this.remove(id, old);
      events.push({ type: 'delete', object: old });
    }
    const wasSynced = this.synced;
    this.synced = true;
    for (const e of events) this.emit(e);
    for (const c of held) this.apply(c);
    if (!wasSynced) for (const resolve of this.syncWaiters.splice(0)) resolve();
  }

  /** The tenant is gone (its rows removed without changes): its objects leave the cache, as deletes. */
  private retire(tenant: string): void {
    if (this.scope.tenant !== undefined && this.scope.tenant !== tenant) return;
    this.listedAt.delete(tenant);
    if (this.buffer) this.buffer = this.buffer.filter((c) => c.key.tenant !== tenant);
    for (const [id, old] of [...this.items]) {
      if (old.key.tenant !== tenant) continue;
      this.remove(id, old);
      this.emit({ type: 'delete', object: old });
    }
  }

  private put(id: string, object: CachedObject, old: CachedObject | undefined): void {
    if (old) this.unindex(id, old);
    this.items.set(id, object);
    for (const [name, fn] of this.indexers) {
      const index = this.indices.get(name)!;
      for (const v of fn(object)) {
        let ids = index.get(v);
        if (!ids) index.set(v, (ids = new Set()));
        ids.add(id);
      }
    }
  }

  private remove(id: string, old: CachedObject): void {
    this.unindex(id, old);
    this.items.delete(id);
  }

  private unindex(id: string, old: CachedObject): void {
    for (const [name, fn] of this.indexers) {
      const index = this.indices.get(name)!;
      for (const v of fn(old)) {
        const ids = index.get(v);
        ids?.delete(id);
        if (ids?.size === 0) index.delete(v);
      }
    }
  }

  private emit(event: InformerEvent): void {
    for (const reg of this.handlers) this.deliver(reg, event);
  }

  private deliver(reg: Registration, event: InformerEvent): void {
    try {
      reg.handler(event);
    } catch (err) {
      this.logger.error({ resource: this.scope.resource, err: (err as Error).message }, 'informer: event handler failed');
    }
  }
}
