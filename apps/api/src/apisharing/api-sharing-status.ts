import type { KubeObject } from '@plinth/apimachinery';
import type { Logger } from 'pino';
import type { CrdRegistry } from '../crd/crd-registry.service.js';
import { exportReference, exportViewPath } from '../kinds/apis/apis-types.js';
import type { ResourceStoreService } from '../resource-store/resource-store.service.js';
import type { AfterWriteHook } from '../resource-store/store-hooks.js';
import { systemWriteContext, type WriteContext } from '../resource-store/write-context.js';
import { apiBindingResource } from '../kinds/apis/apis.resource.js';
import { exportClaims, type PermissionClaim } from '../kinds/apis/permission-claims.js';
import type { ApiSharingIndex } from './api-sharing-index.js';
import { type BindingCondition, claimsStatus } from './claims-status.js';

/** What the status hooks need. */
export interface ApiSharingStatusDeps {
  store: ResourceStoreService;
  index: ApiSharingIndex;
  crds: CrdRegistry;
  logger: Logger;
  /** The server's URL (set once it listens), for APIExport.status.virtualWorkspaces. */
  baseUrl: () => string;
}

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/**
 * The status of an APIBinding once stored (admission has passed, so the
 * export exists and may be bound): `phase: Bound`, the provider tenant,
 * and each bound resource with the provider CRD it is served from
 * (kcp's boundResources). Written before the create is answered, so the
 * client's next request finds the resource served. Never throws.
 */
export function bindingStatusHook(deps: ApiSharingStatusDeps): AfterWriteHook {
  return (ctx, stored) => writeBindingStatus(deps, ctx, stored);
}

/**
 * Writes the status of the APIBinding `stored` (see {@link bindingStatusHook});
 * `claims` are the export's claims when the caller holds a newer export
 * than the index (the export's own write). Never throws.
 */
async function writeBindingStatus(deps: ApiSharingStatusDeps, ctx: WriteContext, stored: KubeObject, claims?: PermissionClaim[]): Promise<KubeObject> {
  try {
    const ref = exportReference(stored);
    await deps.index.ready();
    await deps.crds.prepare(ref.path);
    const exp = deps.index.exportOf(ref.path, ref.name);
    const crds = deps.crds.crds(ref.path);
    const boundResources = (exp?.resources ?? []).map((r) => {
      const crd = crds.find((c) => c.spec.group === r.group && c.spec.names?.plural === r.resource);
      return {
        group: r.group,
        resource: r.resource,
        schema: { name: crd?.metadata.name ?? '', UID: crd?.metadata.uid ?? '' },
        storageVersions: crd?.status?.storedVersions ?? [],
      };
    });
    const old = stored.status as Record<string, unknown> | undefined;
    const previous = (Array.isArray(old?.conditions) ? old.conditions : []) as BindingCondition[];
    const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    const claimed = claimsStatus(claims ?? exp?.claims, stored, previous, now);
    const status = {
      phase: exp ? 'Bound' : 'Binding',
      apiExportTenant: ref.path,
      boundResources,
      exportPermissionClaims: claimed.exportPermissionClaims,
      appliedPermissionClaims: claimed.appliedPermissionClaims,
      conditions: [
        ...claimed.conditions,
        exp
          ? { type: 'Ready', status: 'True', reason: 'Bound', message: '', lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z') }
          : { type: 'Ready', status: 'False', reason: 'APIExportNotFound', message: `APIExport ${ref.path}/${ref.name} not found`, lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z') },
      ],
    };
    const sameClaims = sameJson(old?.exportPermissionClaims, status.exportPermissionClaims) && sameJson(old?.appliedPermissionClaims, status.appliedPermissionClaims) && sameJson(previous.filter((c) => c.type.startsWith('PermissionClaims')), claimed.conditions);
    if (old && old.phase === status.phase && sameJson(old.boundResources, status.boundResources) && sameClaims) return stored;
    return await deps.store.systemUpdate({ ...ctx, subresource: 'status' }, stored.metadata.name ?? '', (o: KubeObject) => {
      o.status = status;
    });
  } catch (err) {
    deps.logger.warn({ tenant: ctx.tenant, name: stored.metadata.name, err: (err as Error).message }, 'cannot write APIBinding status');
    return stored;
  }
}

/** Rewrites the status of every binding of `provider`'s export `name` with the export's `claims` (its claims changed). Never throws. */
async function refreshBindings(deps: ApiSharingStatusDeps, provider: string, name: string, claims: PermissionClaim[]): Promise<void> {
  for (const tenant of deps.index.consumersOf(provider, name)) {
    for (const b of deps.index.bindingsOf(tenant).filter((x) => x.ref.path === provider && x.ref.name === name)) {
      try {
        const found = await deps.store.get(tenant, apiBindingResource, '', b.name);
        await writeBindingStatus(deps, systemWriteContext(tenant, apiBindingResource), found.body as KubeObject, claims);
      } catch (err) {
        deps.logger.warn({ tenant, name: b.name, err: (err as Error).message }, 'cannot refresh APIBinding status');
      }
    }
  }
}

/** The status of an APIExport once stored: the URL of its view (kcp's virtualWorkspaces). Never throws. */
export function exportStatusHook(deps: ApiSharingStatusDeps): AfterWriteHook {
  return async (ctx, stored) => {
    try {
      // The bindings' claims status follows the export's claims (written here, once, by the replica that took the write).
      await refreshBindings(deps, ctx.tenant, stored.metadata.name ?? '', exportClaims(stored));
      const url = `${deps.baseUrl().replace(/\/+$/, '')}${exportViewPath(ctx.tenant, stored.metadata.name ?? '')}`;
      const status = { virtualWorkspaces: [{ url }] };
      const old = stored.status as Record<string, unknown> | undefined;
      if (old && sameJson(old.virtualWorkspaces, status.virtualWorkspaces)) return stored;
      return await deps.store.systemUpdate({ ...ctx, subresource: 'status' }, stored.metadata.name ?? '', (o: KubeObject) => {
        o.status = { ...(o.status as Record<string, unknown> | undefined), ...status };
      });
    } catch (err) {
      deps.logger.warn({ tenant: ctx.tenant, name: stored.metadata.name, err: (err as Error).message }, 'cannot write APIExport status');
      return stored;
    }
  };
}
