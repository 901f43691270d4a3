import type { EnvironmentVariables } from './environment-variables.dto.js';

/** The tracing part of AppConfig (the file is read and validated when the server is built: see tracing-configuration.ts). */
export interface TracingConfig {
  /** A TracingConfiguration file (PLINTH_TRACING_CONFIG_FILE); undefined: no tracing, no cost. */
  tracingConfigFile?: string;
}

/** The tracing settings of the validated environment. Pure; never throws. */
export function readTracingConfig(env: EnvironmentVariables): TracingConfig {
  return { tracingConfigFile: env.PLINTH_TRACING_CONFIG_FILE };
}
