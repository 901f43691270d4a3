import 'reflect-metadata';
import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { type ApiFeaturesConfig, readApiFeaturesConfig } from './api-features-config.js';
import { type AuditConfig, readAuditConfig } from './audit-config.js';
import { type AuthnTlsConfig, readAuthnTlsConfig } from './authn-tls-config.js';
import { type AuthorizationConfig, readAuthorizationConfig } from './authorization-config.js';
import { ConfigError } from './config-error.js';
import { type EncryptionAtRestConfig, readEncryptionAtRestConfig } from './encryption-at-rest-config.js';
import { EnvironmentVariables } from './environment-variables.dto.js';
import { type FlowControlConfig, readFlowControlConfig } from './flow-control-config.js';
import { redactCredentials } from './redact-credentials.js';
import { readServerConfig, type ServerConfig } from './server-config.js';
import { readSnapshotConfig, type SnapshotConfig } from './snapshot-config.js';
import { readStorageConfig, type StorageConfig } from './storage-config.js';
import { readTracingConfig, type TracingConfig } from './tracing-config.js';
import { readWatchConfig, type WatchConfig } from './watch-config.js';
import { readWebhookConfig, type WebhookConfig } from './webhook-config.js';

export { ConfigError } from './config-error.js';

/**
 * Plinth's typed configuration. Nothing else reads process.env. One object;
 * its fields are declared by concern in the interfaces it extends.
 */
export interface AppConfig
  extends ServerConfig,
    StorageConfig,
    WatchConfig,
    FlowControlConfig,
    ApiFeaturesConfig,
    AuditConfig,
    WebhookConfig,
    AuthnTlsConfig,
    AuthorizationConfig,
    EncryptionAtRestConfig,
    TracingConfig,
    SnapshotConfig {}

/** `env` without its unset and empty variables, as an EnvironmentVariables checked against its decorators. Throws ConfigError listing every bad value. */
function validatedEnvironment(env: Record<string, string | undefined>): EnvironmentVariables {
  const raw = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = plainToInstance(EnvironmentVariables, raw, { enableImplicitConversion: false });
  const errors = validateSync(parsed, { skipMissingProperties: false, whitelist: false });
  if (errors.length > 0) {
    const lines = errors.flatMap((e) =>
      // Redacted before quoting: JSON escapes would hide a quoted password's end from the redaction.
      Object.values(e.constraints ?? {}).map((m) => `  ${e.property}=${JSON.stringify(redactCredentials(raw[e.property] ?? ''))}: ${m}`),
    );
    throw new ConfigError(`invalid configuration:\n${lines.join('\n')}`);
  }
  return parsed;
}

/** Validates `env` and returns the configuration. Throws ConfigError naming each bad value. */
export function loadConfig(env: Record<string, string | undefined> = process.env): AppConfig {
  const parsed = validatedEnvironment(env);
  // The readers that may throw run in this order, so that of several bad values the same one is reported.
  const authnTls = readAuthnTlsConfig(parsed);
  const storage = readStorageConfig(parsed);
  const webhooks = readWebhookConfig(parsed);
  const apiFeatures = readApiFeaturesConfig(parsed);
  const snapshots = readSnapshotConfig(parsed);
  return {
    ...readServerConfig(parsed),
    ...storage,
    ...readWatchConfig(parsed),
    ...readFlowControlConfig(parsed),
    ...apiFeatures,
    ...readAuditConfig(parsed),
    ...webhooks,
    ...authnTls,
    ...readAuthorizationConfig(parsed),
    ...readEncryptionAtRestConfig(parsed),
    ...readTracingConfig(parsed),
    ...snapshots,
  };
}

/** Injection token of the validated {@link AppConfig}. */
export const APP_CONFIG = Symbol('APP_CONFIG');
