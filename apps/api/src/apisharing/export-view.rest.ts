import { ApiError, type KubeObject } from '@plinth/apimachinery';
import type { ChangeLogRepository, Storage, WatchCache } from '@plinth/storage';
import type { CrdRegistry } from '../crd/crd-registry.service.js';
import { handleGet } from '../handlers/get.handler.js';
import type { KindRest, RestHandler } from '../handlers/kind-rest.js';
import { compileSelectors } from '../handlers/list-selectors.js';
import { handlePatch } from '../handlers/patch.handler.js';
import { handleUpdate } from '../handlers/update.handler.js';
import type { HandlerContext } from '../http/handler-context.js';
import type { RequestInfo } from '../http/request-info.js';
import { APIS_GROUP, TENANT_ANNOTATION } from '../kinds/apis/apis.schema.js';
import { groupVersion, presentObject, type ResourceDefinition, servedForms } from '../registry/resource-definition.js';
import type { ResourceRegistry } from '../registry/resource-registry.js';
import type { ResourceStoreService } from '../resource-store/resource-store.service.js';
import { mapStorageError } from '../resource-store/storage-errors.mapper.js';
import type { WatchService } from '../watch/watch.service.js';
import type { ApiSharingIndex } from './api-sharing-index.js';
import { decodeViewContinue, encodeCursor, encodeViewContinue, parseCursor, requireCursor, tenantsDigest, type ViewCursor } from './view-cursor.js';
import { readView, type ViewListItem, type ViewListQuery } from './view-list.js';
import { ViewWatch, type ViewWatchShard } from './view-watch.js';

/** What the provider's view reads. */
export interface ExportViewDeps {
  index: ApiSharingIndex;
  crds: CrdRegistry;
  registry: ResourceRegistry;
  lists: Storage;
  store: ResourceStoreService;
  watch: WatchService;
  /** Reads each binding tenant's part of its shard's change log (watches older than the watch cache's window). */
  changes: ChangeLogRepository;
  /** Whether shard `name` answers now (a view with a tenant on a shard that does not is answered 503 at once). */
  shardReady(name: string): boolean;
  /** Seconds a watch stays open at most (the server's maximum). */
  maxWatchSeconds: number;
  /** Tenants of one shard a list or a watch's catch-up reads at once (bounded.ts: half the shard's pool); default 1. */
  readsPerShard?: number;
  /** What the view serves beyond the exported resources: the export's permission claims (apisharing/claimed-view.ts). */
  claims?: ExportViewClaims;
}

/** What one request of the view addresses, resolved. */
export interface ViewTarget {
  provider: string;
  exportName: string;
  inner: RequestInfo;
  /** The provider's definition of the requested version (schema, conversion). */
  def: ResourceDefinition;
  /** The binding tenants addressed: every one (`*`) or the one named. */
  tenants: string[];
  /** Whether a change of `tenant` belongs to a watch when it happens; unset: the tenant binds the export then. */
  member?: (tenant: string) => boolean;
  /** Whether an object of `tenant` is in the view; unset: every object. */
  selects?: (tenant: string, obj: KubeObject) => boolean;
  /** The object as the view sends it, once converted and annotated; unset: unchanged. Does not mutate. */
  present?: (obj: KubeObject) => KubeObject;
  /** The list's kind and apiVersion when they are not the definition's (a metadata-only view). */
  listType?: { kind: string; apiVersion: string };
}

/** What an export's view serves beyond its exported resources: the resources its permission claims reach. */
export interface ExportViewClaims {
  /** The target of a request for a resource the export does not export; throws (403, 404) when no accepted claim reaches it. */
  target(ctx: HandlerContext, provider: string, exportName: string, inner: RequestInfo): Promise<ViewTarget>;
  /** Answers a get or a write that a claim grants; resolves false when none does (the view's own rules then apply). */
  write(ctx: HandlerContext, t: ViewTarget): Promise<boolean>;
}

const notFound = () => new ApiError(404, 'NotFound', 'the server could not find the requested resource', {});

/** `obj` as the provider sees it: the served version, annotated with its tenant, with resourceVersion `rv` (a cursor of the view) when given. Does not mutate. */
function annotated(def: ResourceDefinition, obj: KubeObject, tenant: string, rv?: string): KubeObject {
  const out = presentObject(def, obj);
  const meta = { ...(out.metadata ?? {}) };
  meta.annotations = { ...(meta.annotations ?? {}), [TENANT_ANNOTATION]: tenant };
  if (rv !== undefined) meta.resourceVersion = rv;
  return { ...out, metadata: meta };
}

/** `obj` as the target's view sends it: {@link annotated} (with resourceVersion `rv` when given), then the target's own presentation. Does not mutate. */
export function shown(t: ViewTarget, obj: KubeObject, tenant: string, rv?: string): KubeObject {
  const out = annotated(t.def, obj, tenant, rv);
  return t.present ? t.present(out) : out;
}

/**
 * A write's body with a view's cursor as `metadata.resourceVersion`
 * replaced by the object's own revision on its shard (what the tenant's
 * store compares), so an informer's object can be written back as it is.
 * Other bodies (a plain revision, none, not a JSON object) are returned as
 * they are; a resourceVersion that is neither a revision nor an object's
 * cursor is 400. Does not mutate `body`.
 */
function objectRevisionBody(body: Buffer | undefined): Buffer | undefined {
  if (!body || body.length === 0 || body[0] !== 0x7b) return body;
  let parsed: { metadata?: { resourceVersion?: unknown } };
  try {
    parsed = JSON.parse(body.toString('utf8')) as typeof parsed;
  } catch {
    return body;
  }
  const rv = parsed?.metadata?.resourceVersion;
  if (typeof rv !== 'string' || rv === '' || /^[0-9]+$/.test(rv)) return body;
  const cursor = parseCursor(rv);
  if (!cursor?.object) throw ApiError.badRequest(`invalid resourceVersion "${rv.slice(0, 64)}": not the resourceVersion of an object of this view`);
  return Buffer.from(JSON.stringify({ ...parsed, metadata: { ...parsed.metadata, resourceVersion: String(cursor.object.revision) } }));
}

/**
 * The provider's view of an APIExport (kcp's virtual workspace), served as
 * the `content` subresource of the export so that the provider's RBAC
 * decides (verbs `list`, `watch`, `get`, `update`, `patch` on
 * `apiexports/content`, as kcp): `/services/apiexport/<provider>/<export>/
 * clusters/*` lists and watches the exported resources of every tenant
 * that binds the export in one list and one watch, `/clusters/<tenant>`
 * one of them; every object carries the annotation
 * `tenancy.plinth.dev/tenant`. Writes go to the `status` subresource of
 * one tenant's object only, through that tenant's admission. Tenants that
 * did not bind the export are never read.
 *
 * The binding tenants may live on several shards, whose revisions are
 * their own: the view's resourceVersions are cursors (view-cursor.ts), a
 * vector of one revision per shard. A list reads each shard at one
 * revision; a watch merges the shards' change streams, each event carrying
 * the vector after it, so an informer resumes from any event's or list's
 * resourceVersion (docs/api-sharing.md).
 */
export class ExportView {
  private readonly open = new Set<() => void>();

  constructor(private readonly deps: ExportViewDeps) {}

  /** The KindRest of `apiexports/content`. */
  rest(): KindRest {
    const h = (fn: (ctx: HandlerContext, t: ViewTarget) => Promise<void>): RestHandler => async (ctx) => fn(ctx, await this.target(ctx));
    return {
      serves: (def) => def.group === APIS_GROUP && def.resource === 'apiexports',
      subresources: {
        content: {
          list: h((ctx, t) => this.list(ctx, t)),
          watch: h((ctx, t) => this.watchView(ctx, t)),
          get: h((ctx, t) => this.write(ctx, t)),
          update: h((ctx, t) => this.write(ctx, t)),
          patch: h((ctx, t) => this.write(ctx, t)),
          create: h((ctx, t) => this.write(ctx, t)),
          delete: h((ctx, t) => this.write(ctx, t)),
        },
      },
    };
  }

  /** Serves a list or a watch (by the request's verb) of a target resolved elsewhere: the platform's view (apisharing/platform-view.rest.ts). */
  serve(ctx: HandlerContext, t: ViewTarget): Promise<void> {
    return ctx.info.verb === 'watch' ? this.watchView(ctx, t) : this.list(ctx, t);
  }

  /** Ends every open watch of the view (server shutdown). */
  closeAll(): void {
    for (const close of [...this.open]) close();
  }

  private async target(ctx: HandlerContext): Promise<ViewTarget> {
    const view = ctx.info.exportView;
    if (!view) throw notFound();
    const provider = ctx.info.tenant;
    const { inner } = view;
    await this.deps.index.ready();
    const exp = this.deps.index.exportOf(provider, view.export);
    if (!exp) throw notFound();
    if (!exp.resources.some((r) => r.group === inner.group && r.resource === inner.resource)) {
      if (this.deps.claims) return this.deps.claims.target(ctx, provider, view.export, inner);
      throw notFound();
    }
    await this.deps.crds.prepare(provider);
    const def = this.deps.crds.lookup(provider, inner.group, inner.version, inner.resource);
    if (!def || (!def.namespaced && inner.namespace !== '')) throw notFound();
    const consumers = this.deps.index.consumersOf(provider, view.export);
    const tenants = inner.tenant === '*' ? consumers : consumers.filter((t) => t === inner.tenant);
    if (inner.tenant !== '*' && tenants.length === 0) throw notFound();
    return { provider, exportName: view.export, inner, def, tenants };
  }

  /** The addressed tenants grouped by the shard they live on; 503 (Retry-After) at once when one of those shards is not answering. */
  private shardsOf(t: ViewTarget): Map<string, string[]> {
    const out = new Map<string, string[]>();
    for (const tenant of t.tenants) {
      const shard = this.deps.watch.placementOf(tenant).shard;
      const group = out.get(shard);
      if (group) group.push(tenant);
      else out.set(shard, [tenant]);
    }
    for (const [shard, tenants] of out) {
      if (!this.deps.shardReady(shard) || !this.deps.watch.cacheOf(tenants[0])) {
        throw ApiError.unavailable(`shard "${shard}", where binding tenants of this export live, is not answering; retry the request`);
      }
    }
    return out;
  }

  /** The shards this replica follows that answer now, each with its watch cache. */
  private followable(): Map<string, WatchCache> {
    const out = new Map<string, WatchCache>();
    for (const [name, p] of this.deps.watch.shardPipelines()) if (this.deps.shardReady(name)) out.set(name, p.cache);
    return out;
  }

  /**
   * The shards a watch follows: every one that answers (a tenant that joins
   * the view later, wherever it lives, is seen), each from its revision in
   * `revisions` (the shards of the addressed tenants), the others from
   * their caches' newest revision (no addressed tenant lived there before).
   */
  private followed(revisions: Map<string, number>): ViewWatchShard[] {
    return [...this.followable()].map(([name, cache]) => ({ name, cache, from: revisions.get(name) ?? cache.revision }));
  }

  /** The newest revision of each shard of `shards`: together, a snapshot of every addressed tenant. */
  private async newest(t: ViewTarget, shards: Map<string, string[]>): Promise<Map<string, number>> {
    const out = new Map<string, number>();
    const read = async ([shard, tenants]: [string, string[]]) => out.set(shard, await this.deps.lists.currentRevision(tenants[0]));
    await Promise.all([...shards].map(read)).catch((err) => mapStorageError(err, t.def, ''));
    return out;
  }

  /**
   * The revision of each shard of `shards` in `cursor`: 410 Expired when the
   * binding tenants changed since (a binding deleted or added), when a shard
   * has no revision there, or when one is beyond its shard's newest (a
   * cursor not made by this view).
   */
  private async positionsOf(t: ViewTarget, shards: Map<string, string[]>, cursor: ViewCursor, rv: string): Promise<Map<string, number>> {
    if (cursor.tenants !== tenantsDigest(t.tenants)) throw ApiError.gone(`too old resource version: the binding tenants of this export changed since resourceVersion ${rv}; list again`);
    const newest = await this.newest(t, shards);
    const out = new Map<string, number>();
    for (const [shard, top] of newest) {
      const r = cursor.shards.get(shard);
      if (r === undefined || r > top) throw ApiError.gone(`too old resource version: resourceVersion ${rv} holds no position of shard "${shard}" of this export's view; list again`);
      out.set(shard, r);
    }
    return out;
  }

  /** The view's objects of `q` in the provider's served form, each with the cursor of the snapshot and its own revision as resourceVersion. */
  private async presented(t: ViewTarget, items: ViewListItem[], revisions: Map<string, number>): Promise<KubeObject[]> {
    const tenants = tenantsDigest(t.tenants);
    const served = await servedForms(t.def, items.map((i) => i.obj), true);
    return served.map((o, n) => shown(t, o, items[n].tenant, encodeCursor({ shards: revisions, tenants, object: { shard: items[n].shard, revision: items[n].revision } })));
  }

  /**
   * LIST across shards: every shard read at its own newest revision (or at
   * the cursor's, for `continue`, `resourceVersionMatch=Exact`, or a
   * resourceVersion with `limit`), tenants in name order; the list's
   * resourceVersion is the cursor of that vector. Selectors as for a normal list.
   */
  private async list(ctx: HandlerContext, t: ViewTarget): Promise<void> {
    const q = ctx.query;
    const selectors = compileSelectors(t.def, q.labelSelector ?? '', q.fieldSelector ?? '');
    const limit = q.limit === undefined || q.limit === '' ? 0 : Number(q.limit);
    if (!Number.isSafeInteger(limit) || limit < 0) throw ApiError.badRequest(`invalid limit: ${q.limit}`);
    const rv = q.resourceVersion ?? '';
    const shards = this.shardsOf(t);
    let revisions: Map<string, number>;
    let from: ViewListQuery['from'];
    if (q.continue) {
      if (rv !== '' && rv !== '0') throw ApiError.badRequest('specifying resource version is not allowed when using continue');
      const token = decodeViewContinue(q.continue);
      revisions = await this.positionsOf(t, shards, token.cursor, token.rv);
      from = { tenant: token.tenant, after: token.after };
    } else if (rv !== '' && rv !== '0' && (q.resourceVersionMatch === 'Exact' || (limit > 0 && !q.resourceVersionMatch))) {
      revisions = await this.positionsOf(t, shards, requireCursor(rv), rv);
    } else {
      // NotOlderThan: the newest state is not older than any valid cursor.
      if (rv !== '' && rv !== '0') requireCursor(rv);
      revisions = await this.newest(t, shards);
    }
    const listRv = encodeCursor({ shards: revisions, tenants: tenantsDigest(t.tenants) });
    const page = await this.read(t, selectors, revisions, limit, from);
    const metadata: Record<string, string> = { resourceVersion: listRv };
    if (page.next) metadata.continue = encodeViewContinue(listRv, page.next.tenant, page.next.after);
    const body = { kind: t.listType?.kind ?? t.def.listKind, apiVersion: t.listType?.apiVersion ?? groupVersion(t.def), metadata, items: await this.presented(t, page.items, revisions) };
    ctx.reply.header('content-type', 'application/json').code(200).send(JSON.stringify(body));
  }

  /** Reads an object (`get`) or writes its status (`update`, `patch`) in one binding tenant, through that tenant's store and admission. */
  private async write(ctx: HandlerContext, t: ViewTarget): Promise<void> {
    const { inner } = t;
    if (inner.tenant === '*') throw ApiError.badRequest('name one binding tenant (/clusters/<tenant>/…) to read or write an object');
    if (await this.deps.claims?.write(ctx, t)) return;
    if (ctx.info.verb !== 'get' && inner.subresource !== 'status') {
      throw ApiError.forbidden({ group: t.def.group, kind: t.def.resource, name: inner.name }, 'the provider of an APIExport writes the status subresource of bound objects only');
    }
    await this.deps.registry.prepare(inner.tenant);
    const def = this.deps.registry.lookup(inner.tenant, inner.group, inner.version, inner.resource);
    if (!def || !inner.name || (def.namespaced && !inner.namespace)) throw notFound();
    const innerCtx: HandlerContext = { ...ctx, info: inner, def, body: objectRevisionBody(ctx.body) };
    if (ctx.info.verb === 'get') return handleGet(innerCtx, this.deps.store, this.deps.lists);
    const strategy = def.subresourceStrategies?.status;
    if (!strategy) throw notFound();
    if (ctx.info.verb === 'update') return handleUpdate(innerCtx, this.deps.store, strategy);
    return handlePatch(innerCtx, this.deps.store, false, strategy);
  }

  /** One read of the view's tenants at `revisions` (a page of `limit`, 0 for all, after `from`), with the request's selectors. */
  private read(t: ViewTarget, selectors: ReturnType<typeof compileSelectors>, revisions: Map<string, number>, limit: number, from?: ViewListQuery['from']) {
    const filter = selectors.filter;
    return readView(this.deps.lists, {
      tenants: t.tenants,
      shardOf: (tenant) => this.deps.watch.placementOf(tenant).shard,
      revisions,
      resource: t.def.storageResource,
      namespace: t.inner.namespace || undefined,
      labelRequirements: selectors.labelRequirements,
      fieldRequirements: selectors.keyFieldRequirements,
      filter: filter ? (b) => filter(b as KubeObject) : undefined,
      select: t.selects,
      perShard: this.deps.readsPerShard,
      limit,
      from,
    }).catch((err) => mapStorageError(err, t.def, ''));
  }

  /**
   * WATCH across shards: from a cursor (each shard after its own revision)
   * or, without a resourceVersion, from a snapshot sent as ADDED events.
   * Errors found before the stream starts are answers (400, 410, 503);
   * later ones end the stream with an ERROR event.
   */
  private async watchView(ctx: HandlerContext, t: ViewTarget): Promise<void> {
    const q = ctx.query;
    const selectors = compileSelectors(t.def, q.labelSelector ?? '', q.fieldSelector ?? '');
    const shards = this.shardsOf(t);
    const rv = q.resourceVersion ?? '';
    let revisions: Map<string, number>;
    let initial: ViewListItem[] = [];
    if (rv === '' || rv === '0') {
      revisions = await this.newest(t, shards);
      const snapshot = await this.read(t, selectors, revisions, 0);
      initial = snapshot.items;
    } else {
      revisions = await this.positionsOf(t, shards, requireCursor(rv), rv);
    }
    const timeout = Number(q.timeoutSeconds);
    const seconds = Math.min(Number.isFinite(timeout) && timeout > 0 ? timeout : this.deps.maxWatchSeconds, this.deps.maxWatchSeconds);
    const { reply, req } = ctx;
    reply.hijack();
    const res = reply.raw;
    const headers: Record<string, string> = { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache, private' };
    if (req.raw.httpVersionMajor < 2) headers['Transfer-Encoding'] = 'chunked';
    res.writeHead(200, headers);
    res.flushHeaders();
    req.releaseSeat?.();
    // Addressed at the time of the change: a tenant that binds (or, for a target resolved elsewhere, becomes a member)
    // later joins the watch; one whose binding is deleted (or whose claim no longer applies) leaves it, and the watch ends.
    const member = t.member ?? ((x: string) => t.inner.tenant === '*' || x === t.inner.tenant);
    const current = () => (t.exportName ? this.deps.index.consumersOf(t.provider, t.exportName) : t.tenants);
    const addressed = () => current().filter(member);
    const shardOf = (tenant: string) => this.deps.watch.placementOf(tenant).shard;
    const close = () => watch.end();
    const watch: ViewWatch = new ViewWatch(res, {
      resource: t.def.storageResource,
      namespace: t.inner.namespace || undefined,
      shards: this.followed(revisions),
      tenants: t.tenants,
      addressed: () => addressed().map((tenant) => ({ tenant, shard: shardOf(tenant) })),
      bound: t.member ?? ((tenant) => addressed().includes(tenant)),
      followable: () => this.followable(),
      shardOf,
      liveSince: (tenant) => this.deps.watch.placementOf(tenant).since,
      shardReady: (shard) => this.deps.shardReady(shard),
      digest: tenantsDigest,
      matches: (obj, tenant) => selectors.matches(obj) && (!t.selects || t.selects(tenant, obj)),
      present: async (obj, tenant, cursor) => shown(t, (await servedForms(t.def, [obj]))[0], tenant, cursor),
      bookmarkType: { kind: t.def.kind, apiVersion: groupVersion(t.def) },
      changes: this.deps.changes,
      bookmarks: q.allowWatchBookmarks === 'true',
      seconds,
      perShard: this.deps.readsPerShard,
      onClose: () => this.open.delete(close),
    });
    this.open.add(close);
    watch.sendInitial(initial.map((i) => ({ tenant: i.tenant, shard: i.shard, obj: i.obj, revision: i.revision })));
    watch.follow();
  }
}
