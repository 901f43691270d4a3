import { ApiError, type Authorizer, type KubeObject } from '@plinth/apimachinery';
import { withResourceVersion } from '@plinth/storage';
import type { KindRest, RestHandler } from '../handlers/kind-rest.js';
import type { HandlerContext } from '../http/handler-context.js';
import { inNamespaceScope, type RequestInfo } from '../http/request-info.js';
import { servedForm } from '../registry/resource-definition.js';
import type { ResourceRegistry } from '../registry/resource-registry.js';
import type { ResourceStoreService } from '../resource-store/resource-store.service.js';
import { type ExportView, shown, type ViewTarget } from './export-view.rest.js';

/** The platform scope: the tenant whose RBAC decides who may use the platform's view. */
const PLATFORM_TENANT = 'default';
const TENANCY_GROUP = 'tenancy.plinth.dev';

/** What the platform's view reads with. */
export interface PlatformViewDeps {
  /** The provider view, whose list and watch serve this one too. */
  view: ExportView;
  registry: ResourceRegistry;
  store: ResourceStoreService;
  /** The request authorizer (RBAC of the platform scope), for the Secrets' data check. */
  authorizer: Authorizer;
  /** Every tenant's name. */
  tenants: () => Promise<string[]>;
}

const notFound = (message = 'the server could not find the requested resource') => new ApiError(404, 'NotFound', message, {});

/** `obj` reduced to its metadata, as upstream's PartialObjectMetadata (meta.k8s.io/v1). Does not mutate. */
export function metadataOnly(obj: KubeObject): KubeObject {
  return { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: obj.metadata };
}

/**
 * The platform's view across tenants (issue 43 item 3): for the
 * platform's administrators, `/services/platform/clusters/*` lists and
 * watches any built-in resource of every tenant in one list and one watch
 * (`/clusters/<tenant>` one tenant, its custom and bound resources too, and
 * `get` of one object), each object with the annotation
 * `tenancy.plinth.dev/tenant`, exactly as the provider view serves (its
 * list and watch serve this one). Authorization is RBAC in the platform
 * scope: verbs `get`, `list`, `watch` on `tenants/content` of
 * `tenancy.plinth.dev` (resourceNames: the tenants; none for `*`), so a
 * tenant's identities (members of no binding of the platform scope) get
 * 403. Secrets are served as PartialObjectMetadata unless the user may also
 * use the same verb on `tenants/secrets`. Read-only.
 */
export class PlatformView {
  constructor(private readonly deps: PlatformViewDeps) {}

  /** The KindRest of `tenants/content`. */
  rest(): KindRest {
    const h = (fn: (ctx: HandlerContext, t: ViewTarget) => Promise<void>): RestHandler => async (ctx) => fn(ctx, await this.target(ctx));
    return {
      serves: (def) => def.group === TENANCY_GROUP && def.resource === 'tenants',
      subresources: {
        content: {
          list: h((ctx, t) => this.deps.view.serve(ctx, t)),
          watch: h((ctx, t) => this.deps.view.serve(ctx, t)),
          get: h((ctx, t) => this.get(ctx, t)),
        },
      },
    };
  }

  private async target(ctx: HandlerContext): Promise<ViewTarget> {
    const inner = ctx.info.platformView?.inner;
    if (!inner || !inner.isResourceRequest) throw notFound();
    const all = await this.deps.tenants();
    if (inner.tenant !== '*' && !all.includes(inner.tenant)) throw notFound();
    const scope = inner.tenant === '*' ? PLATFORM_TENANT : inner.tenant;
    await this.deps.registry.prepare(scope);
    const def = this.deps.registry.lookup(scope, inner.group, inner.version, inner.resource);
    // Custom resources have a schema per tenant: across tenants only the built-in kinds have one shape.
    if (inner.tenant === '*' && (!def || def.custom)) throw notFound(`the platform view across tenants serves built-in resources; name one tenant (/clusters/<tenant>/…) for any other`);
    if (!def || (!def.namespaced && inNamespaceScope(inner))) throw notFound();
    const t: ViewTarget = {
      provider: PLATFORM_TENANT,
      exportName: '',
      inner,
      def,
      tenants: inner.tenant === '*' ? all : [inner.tenant],
      // A tenant created while a watch runs joins it.
      member: (tenant) => inner.tenant === '*' || tenant === inner.tenant,
    };
    if (def.group === '' && def.resource === 'secrets' && !(await this.mayReadSecrets(ctx, inner))) {
      t.present = metadataOnly;
      t.listType = { kind: 'PartialObjectMetadataList', apiVersion: 'meta.k8s.io/v1' };
    }
    return t;
  }

  /** Whether the user may read Secrets' data through the view: the request's verb on `tenants/secrets` in the platform scope. */
  private async mayReadSecrets(ctx: HandlerContext, inner: RequestInfo): Promise<boolean> {
    const decision = await this.deps.authorizer.authorize({
      user: ctx.user,
      tenant: PLATFORM_TENANT,
      verb: ctx.info.verb,
      resourceRequest: true,
      apiGroup: TENANCY_GROUP,
      apiVersion: ctx.info.version,
      resource: 'tenants',
      subresource: 'secrets',
      namespace: '',
      name: inner.tenant === '*' ? '' : inner.tenant,
      path: '',
    });
    return decision.allowed;
  }

  private async get(ctx: HandlerContext, t: ViewTarget): Promise<void> {
    const { inner } = t;
    if (inner.tenant === '*') throw ApiError.badRequest('name one tenant (/clusters/<tenant>/…) to read an object');
    if (!inner.name || inner.subresource || (t.def.namespaced && !inner.namespace)) throw notFound();
    const found = await this.deps.store.get(inner.tenant, t.def, t.def.namespaced ? inner.namespace : '', inner.name);
    const obj = shown(t, await servedForm(t.def, withResourceVersion(found.body, found.revision) as KubeObject), inner.tenant);
    ctx.reply.header('content-type', 'application/json').code(200).send(JSON.stringify(obj));
  }
}
