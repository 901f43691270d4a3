import type { Logger } from 'pino';
import type { ControllerManager } from '../controllers/controller-manager.js';
import type { FollowResource } from '../controllers/shared-informer.js';
import { ClusterRoleAggregator } from './cluster-role-aggregator.js';
import { type DefaultRbacDeps, ensureDefaultRbac } from './default-rbac.js';

/**
 * Upstream's default RBAC policy per tenant (default roles and bindings)
 * and ClusterRole aggregation, which follows every ClusterRole change of
 * any tenant as this replica's change stream delivers it.
 */
export class DefaultRbacService {
  private readonly aggregator: ClusterRoleAggregator;
  private aggregating = false;
  private reconciling: Promise<void> | undefined;
  private stopping = false;

  constructor(
    private readonly deps: DefaultRbacDeps,
    follow: FollowResource,
    queues: Pick<ControllerManager, 'queue'>,
    private readonly logger: Logger,
  ) {
    this.aggregator = new ClusterRoleAggregator({ ...deps, follow, queues, logger });
  }

  /** Starts aggregating on ClusterRole changes (on this replica; it is not elected). */
  start(): void {
    if (this.aggregating) return;
    this.aggregating = true;
    this.aggregator.start();
  }

  /**
   * Upstream's default RBAC policy in `tenant` (default roles and bindings,
   * aggregation). Idempotent; tenancy calls it when a tenant is created,
   * start-up for every existing tenant.
   */
  ensure(tenant: string): Promise<string[]> {
    return ensureDefaultRbac(this.deps, tenant);
  }

  /** Runs {@link ensure} for every tenant `list` returns, one at a time in the background (failures logged); {@link stop} ends it. */
  reconcileAllTenants(list: () => Promise<string[]>): void {
    this.reconciling = this.reconcileAll(list).catch((err: Error) => this.logger.warn({ err: err.message }, 'default RBAC reconciliation failed'));
  }

  /** Stops following changes, waits for background reconciliation and the aggregation pass in progress. */
  async stop(): Promise<void> {
    this.stopping = true;
    await this.reconciling;
    if (this.aggregating) await this.aggregator.stop();
    this.aggregating = false;
  }

  private async reconcileAll(list: () => Promise<string[]>): Promise<void> {
    for (const tenant of await list()) {
      if (this.stopping) return;
      try {
        const created = await this.ensure(tenant);
        if (created.length > 0) this.logger.info({ tenant, created: created.length }, 'default RBAC policy completed');
      } catch (err) {
        if (!this.stopping) this.logger.warn({ tenant, err: (err as Error).message }, 'default RBAC reconciliation failed');
      }
    }
  }
}
