import { FeatureGates, type FeatureSpec, KNOWN_FEATURES, parseFeatureDefinitions } from '../features/feature-gates.js';
import { GATED_API_VERSIONS, RuntimeConfig } from '../features/runtime-config.js';
import { rejected } from './config-error.js';
import type { EnvironmentVariables } from './environment-variables.dto.js';

/** The part of AppConfig that says which features are on and which gated group versions are served. */
export interface ApiFeaturesConfig {
  /** Feature gates (PLINTH_FEATURE_GATES, upstream's --feature-gates syntax). */
  featureGates: FeatureGates;
  /** Which gated group versions are served (PLINTH_RUNTIME_CONFIG, upstream's --runtime-config syntax). */
  runtimeConfig: RuntimeConfig;
}

/**
 * The feature gates and runtime config of the validated environment. Pure;
 * throws ConfigError for the first of PLINTH_FEATURE_GATE_DEFINITIONS,
 * PLINTH_FEATURE_GATES and PLINTH_RUNTIME_CONFIG (in that order) that does not parse.
 */
export function readApiFeaturesConfig(env: EnvironmentVariables): ApiFeaturesConfig {
  let featureGates: FeatureGates;
  let runtimeConfig: RuntimeConfig;
  let definedGates: FeatureSpec[];
  try {
    definedGates = parseFeatureDefinitions(env.PLINTH_FEATURE_GATE_DEFINITIONS ?? '');
  } catch (err) {
    throw rejected('PLINTH_FEATURE_GATE_DEFINITIONS', err);
  }
  try {
    featureGates = new FeatureGates(env.PLINTH_FEATURE_GATES ?? '', [...KNOWN_FEATURES, ...definedGates]);
  } catch (err) {
    throw rejected('PLINTH_FEATURE_GATES', err);
  }
  try {
    runtimeConfig = new RuntimeConfig(env.PLINTH_RUNTIME_CONFIG ?? '', GATED_API_VERSIONS);
  } catch (err) {
    throw rejected('PLINTH_RUNTIME_CONFIG', err);
  }
  return { featureGates, runtimeConfig };
}
