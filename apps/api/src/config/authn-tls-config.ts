import { ConfigError } from './config-error.js';
import type { EnvironmentVariables } from './environment-variables.dto.js';

/** The part of AppConfig for secure serving (certificates, client CAs) and authentication (anonymous, tokens, JWT, service accounts). */
export interface AuthnTlsConfig {
  /** Secure serving and authentication (docs/authentication.md). */
  tls: { certFile?: string; keyFile?: string; clientCaFile?: string; rootCaFile?: string; extraNames: string[] };
  /** PLINTH_ANONYMOUS_AUTH (default true); the file's `anonymous` block replaces it. */
  anonymousAuth: boolean;
  /** True when PLINTH_ANONYMOUS_AUTH is set at all: then the authentication configuration may not have an `anonymous` block. */
  anonymousAuthSet: boolean;
  tokenAuthFile?: string;
  authenticationConfigFile?: string;
  /** How often the authentication configuration is checked for changes besides inotify (PLINTH_AUTHENTICATION_CONFIG_RELOAD_INTERVAL_SECONDS). */
  authenticationConfigReloadIntervalSeconds: number;
  serviceAccountIssuer: string;
  serviceAccountKeyFile?: string;
  serviceAccountMaxTokenSeconds: number;
}

/** The TLS and authentication settings of the validated environment, defaults filled in. Pure; throws ConfigError when only one of the certificate and its key is set. */
export function readAuthnTlsConfig(env: EnvironmentVariables): AuthnTlsConfig {
  if (Boolean(env.PLINTH_TLS_CERT_FILE) !== Boolean(env.PLINTH_TLS_KEY_FILE)) {
    throw new ConfigError('invalid configuration:\n  PLINTH_TLS_CERT_FILE and PLINTH_TLS_KEY_FILE must be set together');
  }
  return {
    tls: {
      certFile: env.PLINTH_TLS_CERT_FILE,
      keyFile: env.PLINTH_TLS_KEY_FILE,
      clientCaFile: env.PLINTH_CLIENT_CA_FILE,
      rootCaFile: env.PLINTH_ROOT_CA_FILE,
      extraNames: env.PLINTH_TLS_SAN ? env.PLINTH_TLS_SAN.split(',') : [],
    },
    anonymousAuth: env.PLINTH_ANONYMOUS_AUTH !== 'false',
    anonymousAuthSet: env.PLINTH_ANONYMOUS_AUTH !== undefined,
    tokenAuthFile: env.PLINTH_TOKEN_AUTH_FILE,
    authenticationConfigFile: env.PLINTH_AUTHENTICATION_CONFIG,
    authenticationConfigReloadIntervalSeconds: env.PLINTH_AUTHENTICATION_CONFIG_RELOAD_INTERVAL_SECONDS ?? 60,
    serviceAccountIssuer: env.PLINTH_SERVICE_ACCOUNT_ISSUER ?? 'https://kubernetes.default.svc.cluster.local',
    serviceAccountKeyFile: env.PLINTH_SERVICE_ACCOUNT_KEY_FILE,
    serviceAccountMaxTokenSeconds: env.PLINTH_SERVICE_ACCOUNT_MAX_TOKEN_SECONDS ?? 86400,
  };
}
