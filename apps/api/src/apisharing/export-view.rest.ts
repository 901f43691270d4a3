import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, type KubeObject } from '@plinth/apimachinery';
import { type ChangeEvent, type Storage, withResourceVersion, type WatchCache } from '@plinth/storage';
import type { CrdRegistry } from '../crd/crd-registry.service.js';
import { handleGet } from '../handlers/get.handler.js';
import type { KindRest, RestHandler } from '../handlers/kind-rest.js';
import { handlePatch } from '../handlers/patch.handler.js';
import { handleUpdate } from '../handlers/update.handler.js';
import type { HandlerContext } from '../http/handler-context.js';
import type { RequestInfo } from '../http/request-info.js';
import { APIS_GROUP, TENANT_ANNOTATION } from '../kinds/apis/apis.schema.js';
import { groupVersion, presentObject, type ResourceDefinition, servedForms } from '../registry/resource-definition.js';
import type { ResourceRegistry } from '../registry/resource-registry.js';
import type { ResourceStoreService } from '../resource-store/resource-store.service.js';
import type { WatchService } from '../watch/watch.service.js';
import type { ApiSharingIndex } from './api-sharing-index.js';

/** What the provider's view reads. */
export interface ExportViewDeps {
  index: ApiSharingIndex;
  crds: CrdRegistry;
  registry: ResourceRegistry;
  lists: Storage;
  store: ResourceStoreService;
  watch: WatchService;
  /** Seconds a watch stays open at most (the server's maximum). */
  maxWatchSeconds: number;
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

/** `obj` as the provider sees it: the served version, annotated with its tenant. Does not mutate. */
function annotated(def: ResourceDefinition, obj: KubeObject, tenant: string): KubeObject {
  const out = presentObject(def, obj);
  const meta = { ...(out.metadata ?? {}) };
  meta.annotations = { ...(meta.annotations ?? {}), [TENANT_ANNOTATION]: tenant };
  return { ...out, metadata: meta };
}

/** `obj` as the target's view sends it: {@link annotated}, then the target's own presentation. Does not mutate. */
export function shown(t: ViewTarget, obj: KubeObject, tenant: string): KubeObject {
  const out = annotated(t.def, obj, tenant);
  return t.present ? t.present(out) : out;
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
 * ResourceVersions are the revisions of the shard the binding tenants live
 * on: one list is read at one revision of it, and a watch follows that
 * shard's change stream in revision order (every tenant's changes
 * interleaved as committed), so an informer resumes from any event's or
 * list's resourceVersion. Binding tenants on several shards are refused
 * (503): see docs/api-sharing.md.
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

  /** The one shard every addressed tenant lives on (the provider's when there are none); 503 when they span several. */
  private shardCache(t: ViewTarget): { cache: WatchCache; anyTenant: string } {
    const anyTenant = t.tenants[0] ?? t.provider;
    const shards = new Set(t.tenants.map((x) => this.deps.watch.placementOf(x).shard));
    if (shards.size > 1) throw ApiError.serviceUnavailable(`the binding tenants of this export live on ${shards.size} shards; the view across shards is not served yet`);
    const cache = this.deps.watch.cacheOf(anyTenant);
    if (!cache) throw ApiError.unavailable(`the shard of tenant "${anyTenant}" is not connected; retry the request`);
    return { cache, anyTenant };
  }

  /** The addressed objects of every tenant at `revision`, as the provider sees them. */
  private async snapshot(t: ViewTarget, revision: number): Promise<KubeObject[]> {
    const items: KubeObject[] = [];
    for (const tenant of t.tenants) {
      let after;
      do {
        const page = await this.deps.lists.list({ tenant, resource: t.def.storageResource, namespace: t.inner.namespace || undefined, atRevision: revision, limit: 500, after });
        const bodies = page.items.map((i) => withResourceVersion(i.body, i.revision) as KubeObject);
        for (const o of await servedForms(t.def, bodies, true)) if (!t.selects || t.selects(tenant, o)) items.push(shown(t, o, tenant));
        after = page.next;
      } while (after);
    }
    return items;
  }

  private async list(ctx: HandlerContext, t: ViewTarget): Promise<void> {
    const { anyTenant } = this.shardCache(t);
    const revision = await this.deps.lists.currentRevision(anyTenant);
    const items = await this.snapshot(t, revision);
    const body = { kind: t.listType?.kind ?? t.def.listKind, apiVersion: t.listType?.apiVersion ?? groupVersion(t.def), metadata: { resourceVersion: String(revision) }, items };
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
    const innerCtx: HandlerContext = { ...ctx, info: inner, def };
    if (ctx.info.verb === 'get') return handleGet(innerCtx, this.deps.store, this.deps.lists);
    const strategy = def.subresourceStrategies?.status;
    if (!strategy) throw notFound();
    if (ctx.info.verb === 'update') return handleUpdate(innerCtx, this.deps.store, strategy);
    return handlePatch(innerCtx, this.deps.store, false, strategy);
  }

  private async watchView(ctx: HandlerContext, t: ViewTarget): Promise<void> {
    const { cache, anyTenant } = this.shardCache(t);
    const rv = ctx.query.resourceVersion ?? '';
    let from: number;
    let initial: KubeObject[] = [];
    if (rv === '' || rv === '0') {
      from = await this.deps.lists.currentRevision(anyTenant);
      initial = await this.snapshot(t, from);
    } else {
      if (!/^\d+$/.test(rv)) throw ApiError.badRequest(`invalid resourceVersion: ${rv}`);
      from = Number(rv);
    }
    if (from > cache.revision) await Promise.race([cache.whenApplied(from), new Promise((r) => setTimeout(r, 5000))]);
    const since = cache.since(from);
    if (!since) throw new ApiError(410, 'Expired', `too old resource version: ${from} (${cache.oldestResumable})`);
    const stream = this.stream(ctx.req, ctx.reply, t, from, Number(ctx.query.timeoutSeconds) || undefined, ctx.query.allowWatchBookmarks === 'true');
    for (const o of initial) stream.send('ADDED', o);
    for (const c of since) stream.change(c);
    // In the tick that read the window: nothing can slip between the two.
    stream.follow(cache);
  }

  private stream(req: FastifyRequest, reply: FastifyReply, t: ViewTarget, from: number, timeoutSeconds: number | undefined, bookmarks: boolean) {
    reply.hijack();
    const res = reply.raw;
    const headers: Record<string, string> = { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache, private' };
    if (req.raw.httpVersionMajor < 2) headers['Transfer-Encoding'] = 'chunked';
    res.writeHead(200, headers);
    res.flushHeaders();
    req.releaseSeat?.();
    let last = from;
    let chain = Promise.resolve();
    let closed = false;
    let unobserve: (() => void) | undefined;
    let cacheRef: WatchCache | undefined;
    const write = (line: string) => {
      if (!closed) res.write(line + '\n');
    };
    const close = () => {
      if (closed) return;
      closed = true;
      unobserve?.();
      clearTimeout(deadline);
      clearInterval(ticker);
      this.open.delete(close);
      res.end();
    };
    const seconds = Math.min(timeoutSeconds ?? this.deps.maxWatchSeconds, this.deps.maxWatchSeconds);
    const deadline = setTimeout(close, seconds * 1000);
    const ticker = setInterval(() => {
      // Every change up to the cache's revision has been handed to the stream: a bookmark there loses nothing.
      if (bookmarks && cacheRef) chain = chain.then(() => write(JSON.stringify({ type: 'BOOKMARK', object: { kind: t.def.kind, apiVersion: groupVersion(t.def), metadata: { resourceVersion: String(Math.max(last, cacheRef!.revision)) } } })));
    }, 10_000);
    this.open.add(close);
    res.on('close', close);
    // Bound at the time of the change: a tenant that binds later joins the watch, one that unbinds leaves it.
    const bound = (tenant: string) => (t.member ? t.member(tenant) : t.inner.tenant === '*' ? this.deps.index.consumersOf(t.provider, t.exportName).includes(tenant) : tenant === t.inner.tenant);
    return {
      send: (type: string, obj: KubeObject) => {
        chain = chain.then(() => write(JSON.stringify({ type, object: obj })));
      },
      change: (c: ChangeEvent) => {
        if (c.revision <= last || c.key.resource !== t.def.storageResource || c.unreadable !== undefined) return;
        if (t.inner.namespace && c.key.namespace !== t.inner.namespace) return;
        if (!bound(c.key.tenant)) return;
        if (t.selects && !t.selects(c.key.tenant, c.object as KubeObject)) return;
        last = c.revision;
        const tenant = c.key.tenant;
        const obj = c.object as KubeObject;
        chain = chain
          .then(async () => {
            const [served] = await servedForms(t.def, [obj]);
            write(JSON.stringify({ type: c.type, object: shown(t, served, tenant) }));
          })
          .catch(() => close());
      },
      follow(cache: WatchCache) {
        cacheRef = cache;
        if (closed) return;
        unobserve = cache.observe(t.def.storageResource, { onChange: (c) => this.change(c), onReset: () => chain.then(close) });
      },
    };
  }
}
