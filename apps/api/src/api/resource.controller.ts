import { All, Controller, Inject, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Metrics } from '../observability/metrics.js';
import { STORAGE, type Storage } from '@plinth/storage';
import { ResourceRegistry } from '../registry/resource-registry.js';
import { ResourceDeleteService } from '../resource-store/resource-delete.service.js';
import { ResourceStoreService } from '../resource-store/resource-store.service.js';
import { TenantCache } from '../kinds/tenant/tenant-cache.js';
import { WatchService } from '../watch/watch.service.js';
import { StandbyReadRouter } from '../sharding/standby-read-router.js';
import { ApiError } from '@plinth/apimachinery';
import type { HandlerContext } from '../http/handler-context.js';
import { handleCreate } from '../handlers/create.handler.js';
import { handleDelete, handleDeleteCollection } from '../handlers/delete.handler.js';
import { UNSAFE_DELETE, type UnsafeDeleteDeps } from '../handlers/unsafe-delete.js';
import { handleGet } from '../handlers/get.handler.js';
import { KindRestRegistry } from '../handlers/kind-rest.js';
import { handleList } from '../handlers/list.handler.js';
import { handlePatch } from '../handlers/patch.handler.js';
import { handleUpdate } from '../handlers/update.handler.js';
import { handleWatch } from '../handlers/watch.handler.js';
import { parseListOptions } from '../http/options/list-options.dto.js';
import { firstValues, parseBool, type RawQuery } from '../http/options/query-validation.js';
import { inNamespaceScope, requestInfoOf, type RequestInfo } from '../http/request-info.js';
import { setWarnings } from '../http/response-writer.js';
import type { ResourceDefinition } from '../registry/resource-definition.js';

/** Per-request labels for metrics and logs, set by the controller. */
export interface RequestLabels {
  verb: string;
  group: string;
  resource: string;
}

declare module 'fastify' {
  interface FastifyRequest {
    plinth?: RequestLabels;
    /** Warnings collected while handling; sent with the answer, errors included. */
    plinthWarnings?: string[];
  }
}


/** Verbs a namespaced kind serves only under a namespace (list, watch and deletecollection also span all namespaces). */
const NEEDS_NAMESPACE = new Set(['get', 'create', 'update', 'patch', 'delete']);

const NOT_FOUND = () => new ApiError(404, 'NotFound', 'the server could not find the requested resource', {});

function allQueryValues(q: RawQuery): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [k, v] of Object.entries(q ?? {})) if (v !== undefined) out[k] = Array.isArray(v) ? v : [v];
  return out;
}

/**
 * The catch-all for resource paths (`/api/...`, `/apis/...`, and both under
 * `/clusters/{tenant}`): parses the request info, checks the tenant, finds
 * the resource in the registry and hands over to the verb's handler.
 */
@Controller()
export class ResourceController {
  constructor(
    @Inject(TenantCache) private readonly tenants: TenantCache,
    @Inject(ResourceRegistry) private readonly registry: ResourceRegistry,
    @Inject(ResourceStoreService) private readonly store: ResourceStoreService,
    @Inject(ResourceDeleteService) private readonly deleter: ResourceDeleteService,
    @Inject(STORAGE) private readonly lists: Storage,
    @Inject(WatchService) private readonly watch: WatchService,
    @Inject(KindRestRegistry) private readonly rest: KindRestRegistry,
    @Inject(Metrics) private readonly metrics: Metrics,
    @Inject(StandbyReadRouter) private readonly standby: StandbyReadRouter,
    @Inject(UNSAFE_DELETE) private readonly unsafeDeletes: UnsafeDeleteDeps,
  ) {}

  @All('*')
  async handle(@Req() req: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    const rawQuery = (req.query ?? {}) as RawQuery;
    const query = firstValues(rawQuery);
    const info = requestInfoOf(req, parseBool(query.watch) === true);
    // Metric labels only ever name resources the tenant serves: made-up paths share the empty label.
    req.plinth = { verb: info.verb || req.method.toLowerCase(), group: '', resource: '' };
    const tenant = await this.tenants.get(info.tenant);
    if (!tenant) throw NOT_FOUND();
    await this.registry.prepare(info.tenant);
    // GETs of discovery and OpenAPI have routes of their own (DiscoveryController): what reaches here is another method, or no such path.
    if (!info.isResourceRequest) throw this.nonResource(req, info);
    const def = this.registry.lookup(info.tenant, info.group, info.version, info.resource);
    if (!def || (!def.namespaced && inNamespaceScope(info))) throw NOT_FOUND();
    req.plinth = { verb: req.plinth.verb, group: def.group, resource: def.resource };
    const ctx: HandlerContext = {
      req,
      reply,
      info,
      def,
      query,
      queryAll: allQueryValues(rawQuery),
      body: Buffer.isBuffer(req.body) ? req.body : undefined,
      user: req.user ?? { username: 'system:anonymous', groups: ['system:unauthenticated'] },
      warnings: [],
      tenantSince: tenant.createdRevision,
    };
    req.plinthWarnings = ctx.warnings;
    if (def.custom?.deprecationWarning) {
      // As upstream's CRD handler: every request of a deprecated version warns, reads included (handlers that
      // add warnings of their own set the header again from the same list; a watch writes it itself).
      ctx.warnings.push(def.custom.deprecationWarning);
      setWarnings(reply, ctx.warnings);
    }
    if (info.subresource) await this.subresource(ctx, def);
    else await this.dispatch(ctx, info, def);
  }

  /** What a DELETE with ignoreStoreReadErrorWithClusterBreakingPotential needs (KEP-3926). */
  private unsafeDelete(): UnsafeDeleteDeps {
    return this.unsafeDeletes;
  }

  /** 405 for another method on a discovery or OpenAPI path, 404 for any other path that names no resource. */
  private nonResource(req: FastifyRequest, info: RequestInfo): ApiError {
    const known = /^\/(version|apis?|openapi\/v[23])(\/|$)/.test(info.path);
    return known && req.method !== 'GET' && req.method !== 'HEAD' ? ApiError.methodNotAllowed('the server does not allow this method on the requested resource') : NOT_FOUND();
  }

  private async dispatch(ctx: HandlerContext, info: RequestInfo, def: ResourceDefinition): Promise<void> {
    const needsNamespace = def.namespaced && !info.namespace;
    if (needsNamespace && NEEDS_NAMESPACE.has(info.verb)) throw NOT_FOUND();
    // The kind's own REST first (a review answered, not stored), then the generic handler of the verb.
    const own = this.rest.handler(def, info.verb);
    if (own) return own(ctx);
    switch (info.verb) {
      case 'get':
        return handleGet(ctx, this.store, this.lists, this.standby);
      case 'list':
        return handleList(ctx, this.lists, parseListOptions(ctx.query), this.metrics, this.standby);
      case 'watch':
        return handleWatch(ctx, this.watch, this.lists, parseListOptions(ctx.query, true));
      case 'create':
        return handleCreate(ctx, this.store);
      case 'update':
        return handleUpdate(ctx, this.store);
      case 'patch':
        return handlePatch(ctx, this.store, !def.custom);
      case 'delete':
        return handleDelete(ctx, this.deleter, this.unsafeDelete());
      case 'deletecollection':
        return handleDeleteCollection(ctx, this.deleter, this.lists, this.unsafeDelete());
      default:
        throw ApiError.methodNotAllowed(`the server does not allow this method on the requested resource`);
    }
  }

  private async subresource(ctx: HandlerContext, def: ResourceDefinition): Promise<void> {
    const sub = def.subresources.find((s) => s.name === ctx.info.subresource);
    if (!sub) throw NOT_FOUND();
    const verb = ctx.info.verb;
    if (!sub.verbs.includes(verb)) throw ApiError.methodNotAllowed('the server does not allow this method on the requested resource');
    const own = this.rest.handler(def, verb, sub.name);
    if (own) return own(ctx);
    const strategy = def.subresourceStrategies?.[sub.name];
    if (verb === 'get') return handleGet(ctx, this.store, this.lists, this.standby);
    if (verb === 'update') return handleUpdate(ctx, this.store, strategy);
    if (verb === 'patch') return handlePatch(ctx, this.store, !def.custom, strategy);
    throw ApiError.methodNotAllowed('the server does not allow this method on the requested resource');
  }

}
