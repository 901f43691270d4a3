import type { KubeObject } from '@plinth/apimachinery';
import { type ChangeObserver, STORAGE, type Storage, TenantSnapshots } from '@plinth/storage';
import { gateEnabled } from './feature-gate.resource.js';
import { FEATURE_GATE_STORAGE_RESOURCE } from './feature-gate.schema.js';
import type { FeatureStage } from '../../features/feature-gates.js';
import type { TenantFeatureSource, TenantGate } from '../../registry/strategy-context.js';

const STAGE_OF: Record<string, FeatureStage> = { Alpha: 'ALPHA', Beta: 'BETA', GA: 'GA', Deprecated: 'DEPRECATED' };

function toGate(o: KubeObject): [string, TenantGate] | undefined {
  const spec = o.spec as { name?: unknown; stage?: unknown } | undefined;
  const stage = STAGE_OF[String(spec?.stage)];
  return typeof spec?.name === 'string' && stage ? [spec.name, { stage, enabled: gateEnabled(o) }] : undefined;
}

/**
 * The FeatureGates of each tenant, read from PostgreSQL once and kept
 * current by the change stream (attach {@link observer} to the changes of
 * FEATURE_GATE_STORAGE_RESOURCE): a gate switched in a tenant applies to
 * that tenant's next write on every replica.
 */
export class TenantFeatureGates implements TenantFeatureSource {
  private readonly snapshots: TenantSnapshots<Map<string, TenantGate>>;

  constructor(lists: Storage) {
    this.snapshots = new TenantSnapshots({
      load: async (tenant) => {
        const page = await lists.list({ tenant, resource: FEATURE_GATE_STORAGE_RESOURCE });
        return new Map(page.items.map((i) => toGate(i.body as KubeObject)).filter((g): g is [string, TenantGate] => g !== undefined));
      },
    });
  }

  /** Feed for the change stream of FeatureGates (see WatchCache.observe). */
  get observer(): ChangeObserver {
    return this.snapshots.observer;
  }

  async prepare(tenant: string): Promise<void> {
    await this.snapshots.get(tenant);
  }

  get(tenant: string, name: string): TenantGate | undefined {
    return this.snapshots.peek(tenant)?.get(name);
  }
}
