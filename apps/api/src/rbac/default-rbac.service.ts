import type { Logger } from 'pino';
import { ClusterRoleAggregator } from './cluster-role-aggregator.js';
import { type DefaultRbacDeps, ensureDefaultRbac } from './default-rbac.js';
import { clusterRoleResource } from '../kinds/rbac/rbac.resources.js';
import type { ObserveChanges } from '../watch/observe-changes.js';

/**
 * Upstream's default RBAC policy per tenant (default roles and bindings)
 * and ClusterRole aggregation, which follows every ClusterRole change of
 * any tenant as this replica's change stream delivers it.
 */
export class DefaultRbacService {
  private readonly aggregator: ClusterRoleAggregator;
  private stopObserving: (() => void) | undefined;
  private reconciling: Promise<void> | undefined;
  private stopping = false;

  constructor(
    private readonly deps: DefaultRbacDeps,
    private readonly observe: ObserveChanges,
    private readonly logger: Logger,
  ) {
    this.aggregator = new ClusterRoleAggregator(deps, logger);
  }

  /** Starts aggregating on ClusterRole changes. */
  start(): void {
    const agg = this.aggregator;
    this.stopObserving ??= this.observe(clusterRoleResource.storageResource, { onChange: (c) => agg.afterWrite(c.key.tenant), onReset: () => undefined });
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

  /** Stops following changes, waits for background reconciliation and aggregation. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.stopObserving?.();
    await this.reconciling;
    await this.aggregator.idle();
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
