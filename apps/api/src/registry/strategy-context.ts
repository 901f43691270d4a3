import { FeatureGates } from '../features/feature-gates.js';
import { builtinResources } from './builtin-resources.js';
import type { ResourceDefinition, StrategyContext } from './resource-definition.js';

/** Where the store's StrategyContexts read kinds and feature gates from (the tenant's registry and the server's gates). */
export interface StrategyEnvironment {
  kinds: { lookup(tenant: string, group: string, version: string, resource: string): ResourceDefinition | undefined };
  features: Pick<FeatureGates, 'enabled' | 'has' | 'stage'>;
}

/** The StrategyContext of one write in `tenant`. Reads only memory; never throws for an unknown gate (it is off). */
export function strategyContext(env: StrategyEnvironment, tenant: string): StrategyContext {
  return {
    tenant,
    featureEnabled: (name) => env.features.has(name) && env.features.enabled(name),
    featureStage: (name) => env.features.stage(name),
    lookup: (group, version, resource) => env.kinds.lookup(tenant, group, version, resource),
  };
}

/**
 * The environment of a store nobody wired one into: the built-in kinds
 * (read at call time: builtin-resources imports the strategies) and every
 * gate at its default.
 */
export const builtinStrategyEnvironment: StrategyEnvironment = {
  kinds: { lookup: (_tenant, group, version, resource) => builtinResources.find((d) => d.group === group && d.version === version && d.resource === resource) },
  features: new FeatureGates(),
};
