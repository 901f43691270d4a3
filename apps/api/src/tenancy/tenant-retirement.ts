import type { Logger } from 'pino';

/** What a deleted tenant's retirement reaches on this replica (each is told synchronously, in the change stream's order). */
export interface TenantRetirementDeps {
  /** Tells of each tenant being deleted or gone (TenantDirectory.onRetired: fed by the Tenant objects' change stream). */
  onRetired: (listener: (tenant: string) => void) => () => void;
  /** Ends the tenant's watches and the per-tenant state the change stream feeds (RBAC indexes and decisions, ServiceAccounts, CRDs, policies, namespaces). */
  endStreams: (tenant: string, reason: string) => void;
  /** Forgets the tenant's row (uid, phase) this replica cached. */
  forgetRow: (tenant: string) => void;
  /** Forgets the tenant's data-key seeds and decrypted plaintexts this process holds. */
  forgetKeys: (tenant: string) => void;
  logger: Logger;
}

/**
 * Makes a tenant's deletion reach everything this process keeps of it.
 * Tenant deletion removes rows with plain DELETEs (no change rows), so the
 * caches that follow the tenant's own changes never hear of it; the Tenant
 * object's changes (a deletionTimestamp, its removal, or a new uid under the
 * same name) are what every replica and every worker process follows, in
 * order, and each is turned here into the forgetting of all per-tenant
 * state: nothing of the old tenant (grants, cached decisions, ServiceAccount
 * uids, data keys, plaintexts) applies to a new tenant of the same name.
 * Returns the function that stops it.
 */
export function forgetRetiredTenants(deps: TenantRetirementDeps): () => void {
  return deps.onRetired((tenant) => {
    try {
      deps.forgetRow(tenant);
      deps.endStreams(tenant, `tenant ${tenant} is being deleted`);
      deps.forgetKeys(tenant);
      deps.logger.info({ tenant }, 'tenant retired: per-tenant caches, watches and data keys forgotten on this process');
    } catch (err) {
      deps.logger.error({ tenant, err: (err as Error).message }, 'tenant retirement failed');
    }
  });
}
