import { All, Controller, Inject, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { handleSelfSubjectReview, handleTokenRequest, handleTokenReview } from './authn/authentication.handlers.js';
import { handleAccessReview, isAccessReview } from './authz/reviews/access-review.handler.js';
import { customResourceDefinitionResource } from './crd/crd-resource.js';
import { crdStatusStrategy } from './crd/crd.strategy.js';
import { handleScaleGet, handleScalePatch, handleScaleUpdate } from './crd/scale.handler.js';
import { DiscoveryService } from './discovery/discovery.service.js';
import { OpenApiDocumentsService } from './discovery/openapi-documents.service.js';
import { ApiError } from '@plinth/apimachinery';
import { handleNonResource } from './handlers/non-resource.handler.js';
import type { HandlerContext } from './handlers/handler-context.js';
import { handleCreate } from './handlers/create.handler.js';
import { handleDelete, handleDeleteCollection } from './handlers/delete.handler.js';
import { handleGet } from './handlers/get.handler.js';
import { handleList } from './handlers/list.handler.js';
import { handlePatch } from './handlers/patch.handler.js';
import { handleUpdate } from './handlers/update.handler.js';
import { handleWatch } from './handlers/watch.handler.js';
import { parseListOptions } from './http/options/list-options.dto.js';
import { firstValues, parseBool, type RawQuery } from './http/options/query-validation.js';
import { parseRequestInfo, type RequestInfo } from './http/request-info.js';
import { PLINTH_SERVICES, type PlinthServices } from './plinth-services.js';
import { namespaceFinalizeStrategy, namespaceStatusStrategy } from './registry/strategies/namespace.strategy.js';
import type { ResourceDefinition, ResourceStrategy } from './registry/resource-definition.js';
import { tenantResource } from './tenancy/tenant-resource.js';
import { tenantStatusStrategy } from './tenancy/tenant.strategy.js';
import { selfSubjectReviewResource, serviceAccountResource, tokenReviewResource } from './registry/authentication-resources.js';

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
  private readonly discovery: DiscoveryService;
  private readonly openapi: OpenApiDocumentsService;

  constructor(@Inject(PLINTH_SERVICES) private readonly s: PlinthServices) {
    this.discovery = new DiscoveryService(s.registry);
    this.openapi = new OpenApiDocumentsService(s.registry);
  }

  @All('*')
  async handle(@Req() req: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    const rawQuery = (req.query ?? {}) as RawQuery;
    const query = firstValues(rawQuery);
    const path = req.url.split('?')[0];
    const info = parseRequestInfo(req.method, path, parseBool(query.watch) === true);
    // Metric labels only ever name resources the tenant serves: made-up paths share the empty label.
    req.plinth = { verb: info.verb || req.method.toLowerCase(), group: '', resource: '' };
    const tenant = await this.s.tenancy.cache.get(info.tenant);
    if (!tenant) throw NOT_FOUND();
    await this.s.registry.prepare(info.tenant);
    if (!info.isResourceRequest) return handleNonResource(req, reply, info, this.discovery, this.openapi);
    const def = this.s.registry.lookup(info.tenant, info.group, info.version, info.resource);
    if (!def || (!def.namespaced && info.namespace && info.resource !== 'namespaces')) throw NOT_FOUND();
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
    if (def.custom?.deprecationWarning) ctx.warnings.push(def.custom.deprecationWarning);
    if (info.subresource) await this.subresource(ctx, def);
    else await this.dispatch(ctx, info, def);
  }

  private async dispatch(ctx: HandlerContext, info: RequestInfo, def: ResourceDefinition): Promise<void> {
    const needsNamespace = def.namespaced && !info.namespace;
    switch (info.verb) {
      case 'get':
        if (needsNamespace) throw NOT_FOUND();
        return handleGet(ctx, this.s.store, this.s.lists);
      case 'list':
        return handleList(ctx, this.s.lists, parseListOptions(ctx.query), this.s.metrics);
      case 'watch':
        return handleWatch(ctx, this.s.watch, this.s.lists, parseListOptions(ctx.query, true));
      case 'create':
        if (needsNamespace) throw NOT_FOUND();
        if (def === tokenReviewResource) return handleTokenReview(ctx, this.s.authn);
        if (def === selfSubjectReviewResource) return handleSelfSubjectReview(ctx);
        if (isAccessReview(def)) return handleAccessReview(ctx, this.s.authz.reviews);
        return handleCreate(ctx, this.s.store);
      case 'update':
        if (needsNamespace) throw NOT_FOUND();
        return handleUpdate(ctx, this.s.store);
      case 'patch':
        if (needsNamespace) throw NOT_FOUND();
        return handlePatch(ctx, this.s.store, !def.custom);
      case 'delete':
        if (needsNamespace) throw NOT_FOUND();
        return handleDelete(ctx, this.s.deleter);
      case 'deletecollection':
        return handleDeleteCollection(ctx, this.s.deleter, this.s.lists);
      default:
        throw ApiError.methodNotAllowed(`the server does not allow this method on the requested resource`);
    }
  }

  private async subresource(ctx: HandlerContext, def: ResourceDefinition): Promise<void> {
    const sub = def.subresources.find((s) => s.name === ctx.info.subresource);
    if (!sub) throw NOT_FOUND();
    const verb = ctx.info.verb;
    if (!sub.verbs.includes(verb)) throw ApiError.methodNotAllowed('the server does not allow this method on the requested resource');
    if (sub.name === 'scale' && def.custom?.scale) {
      if (verb === 'get') return handleScaleGet(ctx, this.s.store);
      if (verb === 'update') return handleScaleUpdate(ctx, this.s.store);
      if (verb === 'patch') return handleScalePatch(ctx, this.s.store);
    }
    if (def === serviceAccountResource && sub.name === 'token') {
      return handleTokenRequest(ctx, this.s.store, this.s.authn, this.s.config.serviceAccountMaxTokenSeconds);
    }
    const strategy = this.subresourceStrategy(def, sub.name);
    if (verb === 'get') return handleGet(ctx, this.s.store, this.s.lists);
    if (verb === 'update') return handleUpdate(ctx, this.s.store, strategy);
    if (verb === 'patch') return handlePatch(ctx, this.s.store, !def.custom, strategy);
    throw ApiError.methodNotAllowed('the server does not allow this method on the requested resource');
  }

  private subresourceStrategy(def: ResourceDefinition, name: string): ResourceStrategy | undefined {
    if (def.custom) return def.custom.subresourceStrategies[name];
    if (def === customResourceDefinitionResource && name === 'status') return crdStatusStrategy;
    if (def === tenantResource && name === 'status') return tenantStatusStrategy;
    if (def.group === '' && def.resource === 'namespaces') {
      if (name === 'status') return namespaceStatusStrategy;
      if (name === 'finalize') return namespaceFinalizeStrategy;
    }
    return undefined;
  }
}
