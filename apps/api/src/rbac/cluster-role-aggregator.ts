import type { Logger } from 'pino';
import type { ControllerManager } from '../controllers/controller-manager.js';
import { InformerController, type KeySource, onChanges } from '../controllers/informer-controller.js';
import type { FollowResource } from '../controllers/shared-informer.js';
import { clusterRoleResource } from '../kinds/rbac/rbac.resources.js';
import { aggregateClusterRoles, type DefaultRbacDeps } from './default-rbac.js';

/** What the aggregator needs besides the default policy's dependencies. */
export interface ClusterRoleAggregatorDeps extends DefaultRbacDeps {
  /** The change feed (ClusterRole writes of every tenant). */
  follow: FollowResource;
  /** Gives it its work queue. */
  queues: Pick<ControllerManager, 'queue'>;
  logger: Logger;
}

/**
 * Keeps aggregated ClusterRoles (aggregationRule) up to date, as upstream's
 * clusterrole-aggregation controller: every ClusterRole write of a tenant
 * (on the change feed) queues an aggregation pass over that tenant (its
 * key), one tenant at a time; a burst of writes to one tenant costs one
 * pass, and a failed pass is retried with backoff. Built on the controller
 * base, but not elected: every replica runs it (DefaultRbacService starts
 * and stops it), each computing and writing the same rules idempotently.
 * Its pass lists the tenant's ClusterRoles from storage rather than an
 * informer, which would hold every tenant's ClusterRoles on every replica.
 */
export class ClusterRoleAggregator extends InformerController {
  constructor(private readonly deps: ClusterRoleAggregatorDeps) {
    super({ name: 'clusterrole-aggregation', workers: 1, queues: deps.queues });
  }

  protected sources(): KeySource[] {
    return [onChanges(this.deps.follow, clusterRoleResource.storageResource, (c) => c.key.tenant)];
  }

  protected async reconcile(tenant: string): Promise<void> {
    const written = await aggregateClusterRoles(this.deps, tenant);
    if (written > 0) this.deps.logger.debug({ tenant, written }, 'aggregated cluster roles updated');
  }
}
