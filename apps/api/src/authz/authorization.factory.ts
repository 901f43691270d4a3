import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { ObjectListRepository } from '@plinth/storage';
import type { WatchCache } from '@plinth/storage';
import { ClusterRoleAggregator } from '../rbac/cluster-role-aggregator.js';
import { type DefaultRbacDeps, ensureDefaultRbac } from '../rbac/default-rbac.js';
import { clusterRoleResource, rbacResources } from '../rbac/rbac-resources.js';
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

/** Authorization of one server instance: RBAC index, authorizer, escalation admission, aggregation, reviews. */
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
  /** Call after a write to `storageResource` in `tenant` answered 2xx: aggregation and read-your-writes. */
  afterWrite(tenant: string, storageResource: string): Promise<void>;
  /** Installs the hook that holds an RBAC write's answer until this replica's index reflects it. */
  installReadYourWrites(fastify: FastifyInstance): void;
  /** Waits for background aggregation, drops the indexes. */
  stop(): Promise<void>;
}

const RBAC_STORAGE = new Set(rbacResources.map((d) => d.storageResource));
const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** Builds {@link Authorization}. Nothing runs until requests arrive. */
export function createAuthorization(deps: AuthorizationDeps): Authorization {
  const indexes = new RbacIndexService({
    cache: deps.cache,
    lists: deps.lists,
    tenantExists: deps.tenantExists,
    currentRevision: () => deps.lists.currentRevision(),
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
  const afterWrite = async (tenant: string, storageResource: string) => {
    if (!RBAC_STORAGE.has(storageResource)) return;
    if (storageResource === clusterRoleResource.storageResource) need().aggregator.afterWrite(tenant);
    await indexes.catchUp();
  };
  let stopping = false;
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
      aggregator = new ClusterRoleAggregator(rbacDeps, deps.logger);
    },
    ensureDefaultRbac: (tenant) => ensureDefaultRbac(need().rbacDeps, tenant),
    reconcileAllTenants(list) {
      reconciling = reconcileAll(list).catch((err: Error) => deps.logger.warn({ err: err.message }, 'default RBAC reconciliation failed'));
    },
    afterWrite,
    installReadYourWrites(fastify) {
      fastify.addHook('onSend', async (req, reply, payload) => {
        const info = req.plinthRbacWrite;
        if (info && WRITES.has(req.method) && reply.statusCode < 300) await afterWrite(info.tenant, info.storageResource);
        return payload;
      });
    },
    async stop() {
      stopping = true;
      await reconciling;
      await aggregator?.idle();
      indexes.clear();
    },
  };
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the resource controller on writes to RBAC kinds: the answer waits for the RBAC index (read-your-writes). */
    plinthRbacWrite?: { tenant: string; storageResource: string };
  }
}
