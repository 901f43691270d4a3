import { ApiError, isPlainObject } from '@plinth/apimachinery';
import { handleCreate } from '../handlers/create.handler.js';
import { handleDelete } from '../handlers/delete.handler.js';
import { handleGet } from '../handlers/get.handler.js';
import { handlePatch } from '../handlers/patch.handler.js';
import { handleUpdate } from '../handlers/update.handler.js';
import type { HandlerContext } from '../http/handler-context.js';
import { inNamespaceScope, type RequestInfo } from '../http/request-info.js';
import { claimAllows, claimResource, claimSelects, claimsOutcome, type PermissionClaim, sameClaim } from '../kinds/apis/permission-claims.js';
import type { Storage } from '@plinth/storage';
import type { ResourceRegistry } from '../registry/resource-registry.js';
import type { ResourceDeleteService } from '../resource-store/resource-delete.service.js';
import type { ResourceStoreService } from '../resource-store/resource-store.service.js';
import type { ApiSharingIndex } from './api-sharing-index.js';
import type { ExportViewClaims, ViewTarget } from './export-view.rest.js';

/** What the claimed part of an export's view reads and writes with. */
export interface ClaimedViewDeps {
  index: ApiSharingIndex;
  registry: ResourceRegistry;
  lists: Storage;
  store: ResourceStoreService;
  deleter: ResourceDeleteService;
}

const notFound = () => new ApiError(404, 'NotFound', 'the server could not find the requested resource', {});

/**
 * The claims of `provider`'s export `exportName` that `tenant` applies: it
 * binds the export and accepts each of them exactly as the export now makes
 * it (kcp's appliedPermissionClaims). Empty when it does not bind it.
 */
export function appliedClaims(index: ApiSharingIndex, tenant: string, provider: string, exportName: string): PermissionClaim[] {
  const exp = index.exportOf(provider, exportName);
  if (!exp) return [];
  const binding = index.bindingsOf(tenant).find((b) => b.ref.path === provider && b.ref.name === exportName);
  return binding ? claimsOutcome(exp.claims, binding.claims).applied : [];
}

/** The name a create's body gives its object ('' when the body is not a JSON object or names none). */
function bodyName(ctx: HandlerContext): string {
  try {
    const o = JSON.parse(ctx.body?.toString('utf8') ?? '') as unknown;
    const meta = isPlainObject(o) && isPlainObject(o.metadata) ? o.metadata : {};
    return typeof meta.name === 'string' ? meta.name : '';
  } catch {
    return '';
  }
}

/**
 * Permission claims in the provider's view (kcp's claimed resources of the
 * APIExport virtual workspace). A resource that the export does not export
 * is served when the export claims it: lists and watches span exactly the
 * binding tenants that accepted the claim as it is now made (a tenant that
 * rejected it, or never answered, is not part of `*` and is 404 under
 * `/clusters/<tenant>`), filtered by the claim's `resourceSelector`; one
 * object is read or written (create, update, patch, delete) in one tenant
 * when the claim's verbs allow it, through that tenant's store and
 * admission with the provider's identity. A resource neither exported nor
 * claimed is 403. A claim on an exported resource lifts the view's
 * status-only rule for its verbs in the tenants that accepted it.
 */
export class ClaimedView implements ExportViewClaims {
  /** The claim each target resolved here was made for. */
  private readonly claimOf = new WeakMap<ViewTarget, PermissionClaim>();

  constructor(private readonly deps: ClaimedViewDeps) {}

  async target(ctx: HandlerContext, provider: string, exportName: string, inner: RequestInfo): Promise<ViewTarget> {
    await this.deps.registry.prepare(provider);
    const def = this.deps.registry.lookup(provider, inner.group, inner.version, inner.resource);
    if (!def || (!def.namespaced && inNamespaceScope(inner))) throw notFound();
    const claim = this.deps.index.exportOf(provider, exportName)?.claims.find((c) => c.group === inner.group && c.resource === inner.resource);
    const what = { group: inner.group, kind: inner.resource, name: inner.name };
    if (!claim) throw ApiError.forbidden(what, `APIExport "${exportName}" neither exports nor claims ${claimResource(inner)}`);
    if (!claimAllows(claim, ctx.info.verb)) throw ApiError.forbidden(what, `the permission claim of APIExport "${exportName}" on ${claimResource(inner)} does not grant verb "${ctx.info.verb}"`);
    const accepts = (tenant: string) => appliedClaims(this.deps.index, tenant, provider, exportName).some((c) => sameClaim(c, claim));
    const consumers = this.deps.index.consumersOf(provider, exportName).filter(accepts);
    const tenants = inner.tenant === '*' ? consumers : consumers.filter((t) => t === inner.tenant);
    if (inner.tenant !== '*' && tenants.length === 0) throw notFound();
    const t: ViewTarget = {
      provider,
      exportName,
      inner,
      def,
      tenants,
      // At the time of the change: a tenant that accepts later joins a watch, one that rejects or unbinds leaves it.
      member: (tenant) => (inner.tenant === '*' || tenant === inner.tenant) && accepts(tenant),
      selects: (_tenant, o) => claimSelects(claim, o.metadata?.namespace ?? '', o.metadata?.name ?? ''),
    };
    this.claimOf.set(t, claim);
    return t;
  }

  async write(ctx: HandlerContext, t: ViewTarget): Promise<boolean> {
    const { inner } = t;
    let claim = this.claimOf.get(t);
    if (!claim) {
      // An exported resource: the view writes status only, unless an accepted claim on the resource grants the verb.
      if (ctx.info.verb === 'get' || inner.subresource === 'status') return false;
      claim = appliedClaims(this.deps.index, inner.tenant, t.provider, t.exportName).find((c) => c.group === inner.group && c.resource === inner.resource && claimAllows(c, ctx.info.verb));
      if (!claim) return false;
    }
    const name = ctx.info.verb === 'create' ? bodyName(ctx) : inner.name;
    if (!claimSelects(claim, t.def.namespaced ? inner.namespace : '', name)) {
      if (ctx.info.verb === 'create') throw ApiError.forbidden({ group: inner.group, kind: inner.resource, name }, `the permission claim on ${claimResource(inner)} does not select this object`);
      throw notFound();
    }
    await this.deps.registry.prepare(inner.tenant);
    const def = this.deps.registry.lookup(inner.tenant, inner.group, inner.version, inner.resource);
    if (!def || (def.namespaced && !inner.namespace) || (ctx.info.verb !== 'create' && !inner.name)) throw notFound();
    const innerCtx: HandlerContext = { ...ctx, info: inner, def };
    const strategy = inner.subresource ? def.subresourceStrategies?.[inner.subresource] : undefined;
    if (inner.subresource && !strategy) throw notFound();
    switch (ctx.info.verb) {
      case 'get':
        await handleGet(innerCtx, this.deps.store, this.deps.lists);
        return true;
      case 'create':
        await handleCreate(innerCtx, this.deps.store);
        return true;
      case 'update':
        await handleUpdate(innerCtx, this.deps.store, strategy);
        return true;
      case 'patch':
        await handlePatch(innerCtx, this.deps.store, !def.custom, strategy);
        return true;
      case 'delete':
        await handleDelete(innerCtx, this.deps.deleter);
        return true;
      default:
        throw ApiError.methodNotAllowed('the server does not allow this method on the requested resource');
    }
  }
}

