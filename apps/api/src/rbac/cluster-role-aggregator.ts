import type { Logger } from 'pino';
import { aggregateClusterRoles, type DefaultRbacDeps } from './default-rbac.js';

/**
 * Keeps aggregated ClusterRoles (aggregationRule) up to date, as upstream's
 * clusterrole-aggregation controller: every ClusterRole write schedules an
 * aggregation pass over its tenant, run in the background one tenant at a
 * time (a burst of writes to one tenant costs one pass). Never throws;
 * failures are logged and retried at the tenant's next ClusterRole write
 * or at start-up.
 */
export class ClusterRoleAggregator {
  private readonly pending = new Set<string>();
  private running: Promise<void> | undefined;

  constructor(
    private readonly deps: DefaultRbacDeps,
    private readonly logger: Logger,
  ) {}

  /** Schedules an aggregation pass over `tenant` (after a ClusterRole was written there). */
  afterWrite(tenant: string): void {
    this.pending.add(tenant);
    this.running ??= this.drain().finally(() => (this.running = undefined));
  }

  /** Resolves when no pass is pending or running (shutdown, tests). */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  private async drain(): Promise<void> {
    for (;;) {
      const next = this.pending.values().next();
      if (next.done) return;
      const tenant = next.value;
      this.pending.delete(tenant);
      try {
        const written = await aggregateClusterRoles(this.deps, tenant);
        if (written > 0) this.logger.debug({ tenant, written }, 'aggregated cluster roles updated');
      } catch (err) {
        this.logger.warn({ tenant, err: (err as Error).message }, 'cluster role aggregation failed');
      }
    }
  }
}
