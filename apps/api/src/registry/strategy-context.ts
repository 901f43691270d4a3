import type { FeatureGates } from '../features/feature-gates.js';
import type { TenantFeatureSource } from '../features/tenant-feature-gates.js';
import type { ResourceDefinition, StrategyContext } from './resource-definition.js';

/** Where the store's StrategyContexts read kinds and feature gates from (the tenant's registry, the server's gates, the tenant's own). */
export interface StrategyEnvironment {
  kinds: { lookup(tenant: string, group: string, version: string, resource: string): ResourceDefinition | undefined };
  features: Pick<FeatureGates, 'enabled' | 'has' | 'stage'>;
  /** The gates tenants define (FeatureGate objects); the server's win on a clash. */
  tenantFeatures?: TenantFeatureSource;
}

/** The stage of `gate` in `tenant`: the server's gate, else the tenant's own (as last loaded); undefined when nobody defined it. */
export function featureStageIn(env: Pick<StrategyEnvironment, 'features' | 'tenantFeatures'>, tenant: string, gate: string): string | undefined {
  return env.features.stage(gate) ?? env.tenantFeatures?.get(tenant, gate)?.stage;
}

/**
 * The StrategyContext of one write in `tenant`, after the tenant's own
 * gates were loaded. Reads only memory; an unknown gate is off.
 */
export async function strategyContext(env: StrategyEnvironment, tenant: string): Promise<StrategyContext> {
  await env.tenantFeatures?.prepare(tenant);
  return {
    tenant,
    featureEnabled: (name) => (env.features.has(name) ? env.features.enabled(name) : (env.tenantFeatures?.get(tenant, name)?.enabled ?? false)),
    featureStage: (name) => featureStageIn(env, tenant, name),
    isServerFeature: (name) => env.features.has(name),
    lookup: (group, version, resource) => env.kinds.lookup(tenant, group, version, resource),
  };
}

