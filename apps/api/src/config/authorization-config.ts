import type { EnvironmentVariables } from './environment-variables.dto.js';

/** The part of AppConfig for structured authorization (docs/authorization.md). */
export interface AuthorizationConfig {
  /** The AuthorizationConfiguration file; unset: RBAC alone (and the tenants' own webhooks), as before. */
  authorizationConfigFile?: string;
  /** How often the file is checked for changes besides watching its folder. Default 60 (upstream's minute). */
  authorizationConfigReloadSeconds: number;
}

/** The authorization settings of the validated environment, defaults filled in. Pure; the file itself is read by the authorizer's wiring. */
export function readAuthorizationConfig(env: EnvironmentVariables): AuthorizationConfig {
  return {
    authorizationConfigFile: env.PLINTH_AUTHORIZATION_CONFIG,
    authorizationConfigReloadSeconds: env.PLINTH_AUTHORIZATION_CONFIG_RELOAD_INTERVAL_SECONDS ?? 60,
  };
}
