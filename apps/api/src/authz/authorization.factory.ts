import type { Logger } from 'pino';
import type { ObjectListRepository } from '@plinth/storage';
import type { WatchCache } from '@plinth/storage';
import { ClusterRoleAggregator } from '../rbac/cluster-role-aggregator.js';
import { type DefaultRbacDeps, ensureDefaultRbac } from '../rbac/default-rbac.js';
import { clusterRoleResource } from '../rbac/rbac-resources.js';
import type { ResourceRegistry } from '../registry/resource-registry.js';
import type { ResourceStoreService } from '../store/resource-store.service.js';
import { RbacAuthorizer } from './rbac-authorizer.js';
import { RbacEscalationModule } from './rbac-escalation.admission.js';
import { RbacIndexService } from './rbac-index.service.js';
import type { AccessReviewDeps } from './reviews/access-review.handler.js';

/** What authorization is built from. */
export interface AuthorizationDeps {
  logger: Logger;
  lists: ObjectListRepository;
  /** Whether a tenant exists (cached by the caller). */
  tenantExists: (tenant: string) => Promise<boolean>;
  registry: ResourceRegistry;
  /** The replica's watch cache (read lazily). */
  cache: () => WatchCache;
  /** Tenant indexes kept in memory at most. */
  maxTenants?: number;
}

/**
 * Authorization of one server instance: RBAC index, authorizer, escalation
 * admission, aggregation (following ClusterRole changes on the change
 * stream), reviews. RBAC kinds are cached on every replica, so the store's
 * commit barrier gives read-your-writes.
 */
export interface Authorization {
  indexes: RbacIndexService;
  authorizer: RbacAuthorizer;
  escalation: RbacEscalationModule;
  reviews: AccessReviewDeps;
  /** Set once the store exists (it needs the admission chain, which needs {@link escalation}). */
  attachStore(store: ResourceStoreService): void;
  /**
   * Upstream's default RBAC policy in `tenant` (default roles and bindings,
   * aggregation). Idempotent; the tenancy work calls it when a tenant is
   * created, start-up calls it for every existing tenant.
   */
  ensureDefaultRbac(tenant: string): Promise<string[]>;
  /**
   * Start-up: runs {@link ensureDefaultRbac} for every tenant `list` returns,
   * one at a time in the background (failures logged); {@link stop} ends it.
   */
  reconcileAllTenants(list: () => Promise<string[]>): void;
  /** Waits for background aggregation, drops the indexes. */
  stop(): Promise<void>;
}


/** Builds {@link Authorization}. Nothing runs until requests arrive. */
export function createAuthorization(deps: AuthorizationDeps): Authorization {
  const indexes = new RbacIndexService({
    cache: deps.cache,
    lists: deps.lists,
    tenantExists: deps.tenantExists,
    maxTenants: deps.maxTenants,
  });
  const authorizer = new RbacAuthorizer(indexes);
  const escalation = new RbacEscalationModule(authorizer, indexes);
  let rbacDeps: DefaultRbacDeps | undefined;
  let aggregator: ClusterRoleAggregator | undefined;
  const need = () => {
    if (!rbacDeps || !aggregator) throw new Error('authorization: attachStore was not called');
    return { rbacDeps, aggregator };
  };
  let stopping = false;
  let stopObserving: (() => void) | undefined;
  let reconciling: Promise<void> | undefined;
  const reconcileAll = async (list: () => Promise<string[]>) => {
    for (const tenant of await list()) {
      if (stopping) return;
      try {
        const created = await ensureDefaultRbac(need().rbacDeps, tenant);
        if (created.length > 0) deps.logger.info({ tenant, created: created.length }, 'default RBAC policy completed');
      } catch (err) {
        if (!stopping) deps.logger.warn({ tenant, err: (err as Error).message }, 'default RBAC reconciliation failed');
      }
    }
  };
  return {
    indexes,
    authorizer,
    escalation,
    reviews: { authorizer, indexes },
    attachStore(store) {
      rbacDeps = { registry: deps.registry, store, lists: deps.lists };
      const agg = new ClusterRoleAggregator(rbacDeps, deps.logger);
      aggregator = agg;
      // Aggregation follows every ClusterRole change of any tenant, as the change stream delivers it to this replica.
      stopObserving = deps.cache().observe(clusterRoleResource.storageResource, {
        onChange: (c) => agg.afterWrite(c.key.tenant),
        onReset: () => undefined,
      });
    },
    ensureDefaultRbac: (tenant) => ensureDefaultRbac(need().rbacDeps, tenant),
    reconcileAllTenants(list) {
      reconciling = reconcileAll(list).catch((err: Error) => deps.logger.warn({ err: err.message }, 'default RBAC reconciliation failed'));
    },
    async stop() {
      stopping = true;
      stopObserving?.();
      await reconciling;
      await aggregator?.idle();
      indexes.clear();
    },
  };
}
