import type { Logger } from 'pino';
import type { TenantRepository } from '@plinth/storage';
import { ApiError } from '@plinth/apimachinery';
import type { KubeObject } from '@plinth/apimachinery';
import type { ResourceDefinition } from '../registry/resource-definition.js';
import type { ResourceRegistry } from '../registry/resource-registry.js';
import type { ResourceStoreService } from '../resource-store/resource-store.service.js';
import { SYSTEM_NAMESPACES } from '../kinds/namespace/system-namespaces.js';
import { systemWriteContext, type WriteContext } from '../resource-store/write-context.js';
import type { TenantCache } from '../kinds/tenant/tenant-cache.js';
import type { TenantLimits, TenantOwner } from '../kinds/tenant/tenant-api.js';
import { storageLimits } from './tenant-limits.js';

/** The ClusterRoleBinding, inside each tenant, that makes its owners cluster-admin. */
export const OWNERS_BINDING_NAME = 'tenancy.plinth.dev:owners';
const RBAC_GROUP = 'rbac.authorization.k8s.io';

/**
 * Ensures a tenant's default roles (cluster-admin, admin, edit, view…).
 * The RBAC work provides it; until it is wired, provisioning skips this step.
 * Must be idempotent and leave existing objects alone.
 */
export type EnsureDefaultRbac = (tenant: string) => Promise<void>;

/** What provisioning did: `waiting` when a deleted tenant of the same name (or rows left of one) still holds the name. */
export type ProvisionOutcome = 'ready' | 'waiting';

/** Dependencies of {@link TenantProvisioner}. */
export interface TenantProvisionerDeps {
  tenants: TenantRepository;
  cache: TenantCache;
  registry: ResourceRegistry;
  store: ResourceStoreService;
  logger: Logger;
  /** Upstream's default RBAC policy in a tenant (rbac/DefaultRbacService.ensure). */
  ensureDefaultRbac: EnsureDefaultRbac;
  /**
   * Removes, from every shard, the rows of `tenant` made for another Tenant
   * object than `objectUid` (an earlier tenant's, left behind); resolves
   * with how many shards held some. Optional (tests without shards).
   */
  removeForeign?: (tenant: string, objectUid: string) => Promise<number>;
}


/**
 * Creates what a tenant's logical cluster consists of: its row (from then
 * on storage accepts its objects), its system namespaces, its default
 * roles, and the binding of its owners to cluster-admin. Every step is
 * idempotent, so a provisioning cut short (a crash, a lost database) is
 * completed by running it again.
 */
export class TenantProvisioner {
  constructor(private readonly deps: TenantProvisionerDeps) {}

  /**
   * Provisions `name` for `owners`, then enforces `limits` (last, so that
   * what every cluster needs is always created). `objectUid`: the Tenant
   * object's uid; a row of the name made for another Tenant object (an
   * earlier tenant's, still being deleted or left behind) is never adopted:
   * the outcome is `waiting` until it is removed (by its deletion or the
   * leftover sweep). Throws on storage failures (the caller retries later).
   */
  async provision(name: string, owners: TenantOwner[], limits?: TenantLimits, objectUid?: string): Promise<ProvisionOutcome> {
    const { tenants, cache } = this.deps;
    await tenants.ensure(name, objectUid);
    cache.forget(name);
    const row = await tenants.get(name);
    if (!row || row.phase !== 'Active') return 'waiting';
    if (objectUid && row.objectUid != null && row.objectUid !== objectUid) {
      this.deps.logger.warn({ tenant: name, objectUid, rowObjectUid: row.objectUid }, 'tenant provisioning waits: the rows of the name belong to an earlier tenant; removing them');
      this.removeForeign(name, objectUid);
      return 'waiting';
    }
    await this.ensureSystemNamespaces(name);
    await this.deps.ensureDefaultRbac(name);
    await this.bindOwners(name, owners);
    await tenants.setLimits(name, storageLimits(this.deps.registry, name, limits));
    return 'ready';
  }

  /** Removes an earlier tenant's rows of the name in the background (one run per name at a time); the next reconcile provisions. */
  private readonly removing = new Set<string>();
  private removeForeign(name: string, objectUid: string): void {
    const remove = this.deps.removeForeign;
    if (!remove || this.removing.has(name)) return;
    this.removing.add(name);
    void remove(name, objectUid)
      .then((shards) => this.deps.logger.info({ tenant: name, shards }, 'rows of an earlier tenant of the name removed'))
      .catch((err) => this.deps.logger.warn({ tenant: name, err: (err as Error).message }, 'removing an earlier tenant\'s rows failed; the leftover sweep will'))
      .finally(() => this.removing.delete(name));
  }

  private async createIfMissing(ctx: WriteContext, obj: KubeObject): Promise<void> {
    try {
      await this.deps.store.create(ctx, obj);
    } catch (err) {
      if (!(err instanceof ApiError && err.code === 409)) throw err;
    }
  }

  private async ensureSystemNamespaces(tenant: string): Promise<void> {
    const def = this.deps.registry.lookup(tenant, '', 'v1', 'namespaces');
    if (!def) return;
    for (const name of SYSTEM_NAMESPACES) {
      await this.createIfMissing(systemWriteContext(tenant, def), { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
    }
  }

  /**
   * Binds the owners to cluster-admin with one ClusterRoleBinding, kept equal
   * to spec.owners (created, updated, or left alone when equal). A no-op
   * while RBAC kinds are not served.
   */
  private async bindOwners(tenant: string, owners: TenantOwner[]): Promise<void> {
    const def = this.deps.registry.lookup(tenant, RBAC_GROUP, 'v1', 'clusterrolebindings');
    if (!def) return;
    const subjects = owners.map((o) => ({ kind: o.kind, apiGroup: RBAC_GROUP, name: o.name }));
    const desired: KubeObject = {
      apiVersion: `${RBAC_GROUP}/v1`,
      kind: 'ClusterRoleBinding',
      metadata: { name: OWNERS_BINDING_NAME, labels: { 'tenancy.plinth.dev/owners': 'true' } },
      roleRef: { apiGroup: RBAC_GROUP, kind: 'ClusterRole', name: 'cluster-admin' },
      subjects,
    };
    const ctx = systemWriteContext(tenant, def);
    try {
      await this.deps.store.create(ctx, desired);
    } catch (err) {
      if (!(err instanceof ApiError && err.code === 409)) throw err;
      await this.deps.store.update({ ...ctx, options: { kind: 'UpdateOptions', apiVersion: 'meta.k8s.io/v1' } }, OWNERS_BINDING_NAME, (current) => ({
        ...current,
        roleRef: desired.roleRef,
        subjects,
      }));
    }
  }
}
