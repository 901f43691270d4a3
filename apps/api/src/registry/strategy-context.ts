import type { FieldError } from '@plinth/apimachinery';
import type { CelRulesJob, ResourceDefinition, StrategyContext } from './resource-definition.js';

/** The server's feature gates as strategies read them (features/FeatureGates). */
export interface ServerFeatures {
  enabled(name: string): boolean;
  has(name: string): boolean;
  stage(name: string): string | undefined;
}

/** One gate a tenant defined, as strategies see it. */
export interface TenantGate {
  /** ALPHA, BETA, GA or DEPRECATED. */
  stage: string;
  enabled: boolean;
}

/** What strategies read of the tenants' own gates: loaded per write (`prepare`), then read synchronously. */
export interface TenantFeatureSource {
  prepare(tenant: string): Promise<void>;
  /** The tenant's gate `name` as last prepared, or undefined. */
  get(tenant: string, name: string): TenantGate | undefined;
}

/** Where the store's StrategyContexts read kinds and feature gates from (the tenant's registry, the server's gates, the tenant's own). */
export interface StrategyEnvironment {
  kinds: {
    lookup(tenant: string, group: string, version: string, resource: string): ResourceDefinition | undefined;
    all(tenant: string): ResourceDefinition[];
  };
  features: ServerFeatures;
  /** The gates tenants define (FeatureGate objects); the server's win on a clash. */
  tenantFeatures?: TenantFeatureSource;
  /** Where custom resources' CEL rules run (the CEL worker pool); absent: inline. */
  celRules?: { validate(tenant: string, job: CelRulesJob): Promise<FieldError[]> };
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
    lookupKind: (group, version, kind) => env.kinds.all(tenant).find((d) => d.group === group && d.version === version && d.kind === kind),
    celRules: env.celRules ? (job) => env.celRules!.validate(tenant, job) : undefined,
  };
}

/** Injection token of the {@link StrategyEnvironment} every write's strategies consult (kinds, server and tenant feature gates). */
export const STRATEGY_ENVIRONMENT = Symbol('STRATEGY_ENVIRONMENT');
