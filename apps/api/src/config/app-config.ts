import 'reflect-metadata';
import { availableParallelism } from 'node:os';
import { plainToInstance, Type } from 'class-transformer';
import { FeatureGates, type FeatureSpec, KNOWN_FEATURES, parseFeatureDefinitions } from '../features/feature-gates.js';
import { GATED_API_VERSIONS, RuntimeConfig } from '../features/runtime-config.js';
import { IsIn, IsInt, IsOptional, IsString, Matches, Max, Min, validateSync } from 'class-validator';
import { ServiceResolver } from '@plinth/admission';
import { redactCredentials } from './redact-credentials.js';
import { type ConfiguredShard, parseShardList } from './shard-list.js';

/** The environment Plinth reads, validated once at start-up. */
class EnvironmentVariables {
  @IsOptional() @Type(() => Number) @IsInt() @Min(0) @Max(65535)
  PORT?: number;

  @IsOptional() @IsString() @Matches(/^[A-Za-z0-9.:\-[\]]+$/, { message: 'HOST must be a hostname or IP address' })
  HOST?: string;

  @IsOptional() @IsString()
  PLINTH_DATA_DIR?: string;

  @IsOptional() @Matches(/^postgres(ql)?:\/\/\S+$/, { message: 'DATABASE_URL must be a postgres:// or postgresql:// URL' })
  DATABASE_URL?: string;

  @IsOptional() @Matches(/^rediss?:\/\/\S+$/, { message: 'REDIS_URL must be a redis:// or rediss:// URL' })
  REDIS_URL?: string;

  @IsOptional() @Matches(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?(,[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/, {
    message: 'PLINTH_TENANTS must be a comma-separated list of DNS-1123 labels',
  })
  PLINTH_TENANTS?: string;

  /** Shards to register at start when they have no Shard object yet: `name=postgres://…` pairs separated by spaces. */
  @IsOptional()
  PLINTH_SHARDS?: string;

  @IsOptional() @IsIn(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
  LOG_LEVEL?: string;

  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(65535)
  PLINTH_EMBEDDED_PG_PORT?: number;

  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(1000)
  PLINTH_DB_POOL_SIZE?: number;

  /** Row-level security between tenants on the request path's statements (default on; docs/hardening.md). */
  @IsOptional() @IsIn(['on', 'off'])
  PLINTH_ROW_LEVEL_SECURITY?: string;

  @IsOptional() @Type(() => Number) @IsInt() @Min(60)
  PLINTH_HISTORY_RETENTION_SECONDS?: number;

  @IsOptional() @Type(() => Number) @IsInt() @Min(100)
  PLINTH_WATCH_CACHE_SIZE?: number;

  @IsOptional() @Type(() => Number) @IsInt() @Min(1)
  PLINTH_BOOKMARK_INTERVAL_SECONDS?: number;

  @IsOptional() @Type(() => Number) @IsInt() @Min(1)
  PLINTH_MAX_WATCH_SECONDS?: number;

  @IsOptional() @Type(() => Number) @IsInt() @Min(10) @Max(1000)
  PLINTH_TENANT_VALIDATION_MS_PER_SECOND?: number;

  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(64)
  PLINTH_CEL_WORKERS?: number;

  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(64)
  PLINTH_WORKERS?: number;

  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(10000)
  PLINTH_TENANT_CONCURRENT_REQUESTS?: number;

  @IsOptional() @Type(() => Number) @IsInt() @Min(0) @Max(100000)
  PLINTH_MAX_REQUESTS_INFLIGHT?: number;

  @IsOptional() @Type(() => Number) @IsInt() @Min(0) @Max(100000)
  PLINTH_HTTP2_MAX_STREAMS_PER_CONNECTION?: number;

  @IsOptional() @IsString()
  PLINTH_FEATURE_GATES?: string;

  @IsOptional() @IsString()
  PLINTH_FEATURE_GATE_DEFINITIONS?: string;

  @IsOptional() @IsString()
  PLINTH_RUNTIME_CONFIG?: string;

  @IsOptional() @IsString()
  PLINTH_AUDIT_POLICY_FILE?: string;

  @IsOptional() @IsString()
  PLINTH_AUDIT_LOG_PATH?: string;

  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(100000)
  PLINTH_AUDIT_LOG_MAXSIZE?: number;

  @IsOptional() @Type(() => Number) @IsInt() @Min(0) @Max(1000)
  PLINTH_AUDIT_LOG_MAXBACKUP?: number;

  @IsOptional() @Type(() => Number) @IsInt() @Min(0) @Max(10000)
  PLINTH_TENANT_QUEUE_LENGTH?: number;

  @IsOptional() @Type(() => Number) @IsInt() @Min(0) @Max(60000)
  PLINTH_TENANT_QUEUE_WAIT_MS?: number;

  @IsOptional() @Type(() => Number) @Min(0) @Max(600)
  PLINTH_SHUTDOWN_DELAY_SECONDS?: number;

  @IsOptional() @Type(() => Number) @Min(0) @Max(3600)
  PLINTH_SHUTDOWN_TIMEOUT_SECONDS?: number;

  @IsOptional() @Type(() => Number) @Min(0.1) @Max(3600)
  PLINTH_REQUEST_TIMEOUT_SECONDS?: number;

  @IsOptional() @Type(() => Number) @IsInt() @Min(0)
  PLINTH_MAX_WATCHES?: number;

  @IsOptional() @Type(() => Number) @IsInt() @Min(0)
  PLINTH_MAX_WATCHES_PER_TENANT?: number;

  @IsOptional() @Type(() => Number) @IsInt() @Min(0)
  PLINTH_MAX_WATCHES_PER_USER?: number;

  @IsOptional() @IsString()
  PLINTH_WEBHOOK_SERVICE_MAP?: string;

  @IsOptional() @Type(() => Number) @IsInt() @Min(50) @Max(60000)
  PLINTH_WEBHOOK_REFRESH_MS?: number;

  @IsOptional() @IsIn(['allow', 'deny'])
  PLINTH_WEBHOOK_PRIVATE_NETWORKS?: string;

  @IsOptional() @Matches(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?(,[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/, {
    message: 'PLINTH_WEBHOOK_TRUSTED_TENANTS must be a comma-separated list of tenant names',
  })
  PLINTH_WEBHOOK_TRUSTED_TENANTS?: string;

  @IsOptional() @Type(() => Number) @IsInt() @Min(50)
  PLINTH_WATCH_POLL_INTERVAL_MS?: number;

  @IsOptional() @Type(() => Number) @IsInt() @Min(1024)
  PLINTH_WATCH_BUFFER_BYTES?: number;

  @IsOptional() @Type(() => Number) @IsInt() @Min(1)
  PLINTH_COMPACTION_INTERVAL_SECONDS?: number;

  @IsOptional() @IsString()
  PLINTH_TLS_CERT_FILE?: string;

  @IsOptional() @IsString()
  PLINTH_TLS_KEY_FILE?: string;

  @IsOptional() @IsString()
  PLINTH_CLIENT_CA_FILE?: string;

  @IsOptional() @IsString()
  PLINTH_ROOT_CA_FILE?: string;

  @IsOptional() @Matches(/^[A-Za-z0-9.:\-]+(,[A-Za-z0-9.:\-]+)*$/, { message: 'PLINTH_TLS_SAN must be a comma-separated list of host names and IP addresses' })
  PLINTH_TLS_SAN?: string;

  @IsOptional() @Type(() => Number) @IsInt() @Min(0) @Max(65535)
  PLINTH_HEALTH_PORT?: number;

  @IsOptional() @IsIn(['true', 'false'])
  PLINTH_ANONYMOUS_AUTH?: string;

  @IsOptional() @IsString()
  PLINTH_TOKEN_AUTH_FILE?: string;

  @IsOptional() @IsString()
  PLINTH_AUTHENTICATION_CONFIG?: string;

  @IsOptional() @Matches(/^https:\/\/[^\s?#]+$/, { message: 'PLINTH_SERVICE_ACCOUNT_ISSUER must be an https:// URL without query or fragment' })
  PLINTH_SERVICE_ACCOUNT_ISSUER?: string;

  @IsOptional() @IsString()
  PLINTH_SERVICE_ACCOUNT_KEY_FILE?: string;

  @IsOptional() @Type(() => Number) @IsInt() @Min(600) @Max(2 ** 32)
  PLINTH_SERVICE_ACCOUNT_MAX_TOKEN_SECONDS?: number;

  /** An apiserver.config.k8s.io/v1 EncryptionConfiguration file (kube-apiserver's --encryption-provider-config). */
  @IsOptional() @IsString()
  PLINTH_ENCRYPTION_PROVIDER_CONFIG?: string;

  /** Reload that file when its content changes (--encryption-provider-config-automatic-reload; default false, as upstream). */
  @IsOptional() @IsIn(['true', 'false'])
  PLINTH_ENCRYPTION_PROVIDER_CONFIG_AUTOMATIC_RELOAD?: string;

  /** How often the file is checked for changes when reloading (upstream: every minute). */
  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(3600)
  PLINTH_ENCRYPTION_PROVIDER_CONFIG_RELOAD_INTERVAL_SECONDS?: number;

  /** The most stored rows the encryption rotation job checks per second on each shard (0: as fast as it can). */
  @IsOptional() @Type(() => Number) @IsInt() @Min(0) @Max(1_000_000)
  PLINTH_ENCRYPTION_ROTATION_ROWS_PER_SECOND?: number;

  /** MiB of decrypted values each process keeps so that re-reading the same stored value skips decryption (0: off). */
  @IsOptional() @Type(() => Number) @IsInt() @Min(0) @Max(65_536)
  PLINTH_ENCRYPTION_READ_CACHE_MB?: number;
  /** The tenants' data keys of KMS v2 providers: a PostgreSQL URL (default: the object database's name + `_keys`, same server). */
  @IsOptional() @IsString()
  PLINTH_KEY_STORE_URL?: string;

  /** How often a KMS plugin's Status is polled (upstream: every 60 s while healthy, 10 s while not); one value for both. */
  @IsOptional() @Type(() => Number) @Min(0.05) @Max(3600)
  PLINTH_KMS_STATUS_INTERVAL_SECONDS?: number;

  /** Adaptive replica-wide concurrency (docs/fairness.md): `on` (default) or `off` (PLINTH_MAX_REQUESTS_INFLIGHT stays fixed). */
  @IsOptional() @IsIn(['on', 'off'])
  PLINTH_ADAPTIVE_CONCURRENCY?: string;

  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(100000)
  PLINTH_ADAPTIVE_CONCURRENCY_MIN_SEATS?: number;

  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(10000)
  PLINTH_ADAPTIVE_CONCURRENCY_TARGET_DELAY_MS?: number;

  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(100)
  PLINTH_ADAPTIVE_CONCURRENCY_TARGET_UTILIZATION?: number;
}

/** Plinth's typed configuration. Nothing else reads process.env. */
export interface AppConfig {
  port: number;
  host: string;
  dataDir: string;
  /** Undefined: run an embedded PostgreSQL in `dataDir`. */
  databaseUrl?: string;
  /** Set: cluster mode (Redis fan-out, BullMQ). */
  redisUrl?: string;
  /** Tenants to create at start-up besides `default`. */
  tenants: string[];
  /** PLINTH_SHARDS: shards registered at start (a Secret and a Shard object each) when missing. */
  shards: ConfiguredShard[];
  logLevel: string;
  embeddedPgPort: number;
  dbPoolSize: number;
  /** PLINTH_ROW_LEVEL_SECURITY: the request path runs under PostgreSQL row-level security, one tenant per statement. */
  rowLevelSecurity: boolean;
  historyRetentionSeconds: number;
  watchCacheSize: number;
  bookmarkIntervalSeconds: number;
  maxWatchSeconds: number;
  /** On SIGTERM, /readyz fails this long while requests are still served (load balancers notice). */
  shutdownDelaySeconds: number;
  /** Then in-flight requests get at most this long to finish. */
  shutdownTimeoutSeconds: number;
  /** A request other than a watch not answered this long after it arrived (body upload included) gets 504 (kube-apiserver's --request-timeout). */
  requestTimeoutSeconds: number;
  /** Event-loop time a tenant may spend validating custom resources, ms per second (burst: ten times this). */
  tenantValidationMsPerSecond: number;
  /** Worker threads that evaluate custom resources' CEL rules (each tenant may use half of them at once). */
  celWorkers: number;
  /** Server processes on this host sharing the port (PLINTH_WORKERS; default: the CPUs Node may use). 1: no fork. */
  workers: number;
  /**
   * Set by main.ts in each worker process of PLINTH_WORKERS > 1, never from the environment; undefined in a
   * process that serves alone. `attachEmbeddedPostgres`: the primary runs the embedded PostgreSQL, so connect to
   * its socket rather than start it.
   */
  worker?: { id: number; attachEmbeddedPostgres: boolean };
  /** Seats executing requests of one tenant occupy at once on a replica (1 to 10 per request, by estimated work), unless its Tenant's spec.limits.concurrentRequests says otherwise. */
  tenantConcurrentRequests: number;
  /** Seats executing requests of all tenants occupy at once on a replica (0: only the per-tenant bound); freed seats go to the waiting tenant with the least virtual time. */
  maxRequestsInflight: number;
  /** Concurrent HTTP/2 streams a client may open on one connection (kube-apiserver's --http2-max-streams-per-connection; 0: its default, 100). */
  http2MaxStreamsPerConnection: number;
  /** Requests of one tenant that may wait for a seat on a replica (beyond: 429 at once). */
  tenantQueueLength: number;
  /** The longest a request waits for a seat before it gets 429. */
  tenantQueueWaitMs: number;
  /** Feature gates (PLINTH_FEATURE_GATES, upstream's --feature-gates syntax). */
  featureGates: FeatureGates;
  /** Which gated group versions are served (PLINTH_RUNTIME_CONFIG, upstream's --runtime-config syntax). */
  runtimeConfig: RuntimeConfig;
  /** An audit.k8s.io/v1 Policy file; with auditLogPath, every request the policy selects is audited. */
  auditPolicyFile: string;
  /** Where audit events go: a file, or `-` for standard output. */
  auditLogPath: string;
  /** Rotate the audit log at this size, MiB. */
  auditLogMaxSizeMiB: number;
  /** Rotated audit logs kept. */
  auditLogMaxBackups: number;
  /** Open watches per replica (0: only the file-descriptor bound); never more than the open-file limit minus a headroom. */
  maxWatches: number;
  /** Open watches per tenant on one replica (0: no limit). */
  maxWatchesPerTenant: number;
  /** Open watches per user (within a tenant) on one replica (0: no limit). */
  maxWatchesPerUser: number;
  /** Admission webhook `service` references → addresses (docs/admission.md); '' when unset. */
  webhookServiceMap: string;
  /** Webhook configuration snapshots are refreshed after this; changes take effect within twice this. */
  webhookRefreshMs: number;
  /** Whether tenants' webhook URLs may reach private ranges (RFC 1918, CGNAT, fc00::/7). Default true. */
  webhookAllowPrivateNetworks: boolean;
  /** Tenants whose webhooks may call loopback and the server's own addresses, with detailed errors (local development). */
  webhookTrustedTenants: string[];
  /** Fallback poll of the change log when no NOTIFY / stream entry arrives. */
  watchPollIntervalMs: number;
  /** Bytes a watcher may have queued before it is closed as too slow. */
  watchBufferBytes: number;
  compactionIntervalSeconds: number;
  /** Secure serving and authentication (docs/authentication.md). */
  tls: { certFile?: string; keyFile?: string; clientCaFile?: string; rootCaFile?: string; extraNames: string[] };
  /** Port of the plain-HTTP health/metrics listener on 127.0.0.1; undefined: none. */
  healthPort?: number;
  anonymousAuth: boolean;
  tokenAuthFile?: string;
  authenticationConfigFile?: string;
  serviceAccountIssuer: string;
  serviceAccountKeyFile?: string;
  serviceAccountMaxTokenSeconds: number;
  /** Encryption at rest: the EncryptionConfiguration file, whether it is reloaded when it changes, and how often that is checked. */
  encryption: {
    providerConfigFile?: string;
    automaticReload: boolean;
    reloadIntervalSeconds: number;
    /** PLINTH_ENCRYPTION_ROTATION_ROWS_PER_SECOND (0: no limit). */
    rotationRowsPerSecond: number;
    /** PLINTH_ENCRYPTION_READ_CACHE_MB in bytes (0: every read decrypts). */
    readCacheBytes: number;
    /** Undefined: beside the object database (see defaultKeyStoreUrl). */
    keyStoreUrl?: string;
    /** Undefined: upstream's 60 s healthy, 10 s unhealthy. */
    kmsStatusIntervalSeconds?: number;
  };
  /**
   * Adaptive replica-wide concurrency: whether the replica-wide seat limit
   * shrinks while the event loop's delay is over `targetDelayMs` and the loop
   * busy for at least `targetUtilization` (0 to 1) of the time, and grows
   * back (by one seat per window) otherwise, between `minSeats` and
   * `maxRequestsInflight` (docs/fairness.md).
   */
  adaptiveConcurrency: { enabled: boolean; minSeats: number; targetDelayMs: number; targetUtilization: number };
}

/**
 * Thrown by {@link loadConfig}; `message` lists every bad variable. It is
 * printed at start-up, so the values it echoes have their passwords (of
 * URLs, `password=` settings) redacted.
 */
export class ConfigError extends Error {}

/** The error for a variable its parser rejected; the parser's message may quote the value. */
function rejected(variable: string, err: unknown): ConfigError {
  return new ConfigError(`invalid configuration:\n  ${variable}: ${redactCredentials((err as Error).message)}`);
}

/** Validates `env` and returns the configuration. Throws ConfigError naming each bad value. */
export function loadConfig(env: Record<string, string | undefined> = process.env): AppConfig {
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
  if (Boolean(parsed.PLINTH_TLS_CERT_FILE) !== Boolean(parsed.PLINTH_TLS_KEY_FILE)) {
    throw new ConfigError('invalid configuration:\n  PLINTH_TLS_CERT_FILE and PLINTH_TLS_KEY_FILE must be set together');
  }
  let shards: ConfiguredShard[];
  try {
    shards = parseShardList(parsed.PLINTH_SHARDS ?? '');
  } catch (err) {
    throw rejected('PLINTH_SHARDS', err);
  }
  try {
    ServiceResolver.parse(parsed.PLINTH_WEBHOOK_SERVICE_MAP);
  } catch (err) {
    throw rejected('PLINTH_WEBHOOK_SERVICE_MAP', err);
  }
  let featureGates: FeatureGates;
  let runtimeConfig: RuntimeConfig;
  let definedGates: FeatureSpec[];
  try {
    definedGates = parseFeatureDefinitions(parsed.PLINTH_FEATURE_GATE_DEFINITIONS ?? '');
  } catch (err) {
    throw rejected('PLINTH_FEATURE_GATE_DEFINITIONS', err);
  }
  try {
    featureGates = new FeatureGates(parsed.PLINTH_FEATURE_GATES ?? '', [...KNOWN_FEATURES, ...definedGates]);
  } catch (err) {
    throw rejected('PLINTH_FEATURE_GATES', err);
  }
  try {
    runtimeConfig = new RuntimeConfig(parsed.PLINTH_RUNTIME_CONFIG ?? '', GATED_API_VERSIONS);
  } catch (err) {
    throw rejected('PLINTH_RUNTIME_CONFIG', err);
  }
  return {
    port: parsed.PORT ?? 6443,
    host: parsed.HOST ?? '127.0.0.1',
    dataDir: parsed.PLINTH_DATA_DIR ?? './.plinth',
    databaseUrl: parsed.DATABASE_URL,
    redisUrl: parsed.REDIS_URL,
    tenants: parsed.PLINTH_TENANTS ? parsed.PLINTH_TENANTS.split(',') : [],
    shards,
    logLevel: parsed.LOG_LEVEL ?? 'info',
    embeddedPgPort: parsed.PLINTH_EMBEDDED_PG_PORT ?? 54329,
    dbPoolSize: parsed.PLINTH_DB_POOL_SIZE ?? 20,
    rowLevelSecurity: parsed.PLINTH_ROW_LEVEL_SECURITY !== 'off',
    historyRetentionSeconds: parsed.PLINTH_HISTORY_RETENTION_SECONDS ?? 24 * 3600,
    watchCacheSize: parsed.PLINTH_WATCH_CACHE_SIZE ?? 10000,
    bookmarkIntervalSeconds: parsed.PLINTH_BOOKMARK_INTERVAL_SECONDS ?? 60,
    maxWatchSeconds: parsed.PLINTH_MAX_WATCH_SECONDS ?? 1800,
    maxWatches: parsed.PLINTH_MAX_WATCHES ?? 0,
    shutdownDelaySeconds: parsed.PLINTH_SHUTDOWN_DELAY_SECONDS ?? 5,
    shutdownTimeoutSeconds: parsed.PLINTH_SHUTDOWN_TIMEOUT_SECONDS ?? 60,
    requestTimeoutSeconds: parsed.PLINTH_REQUEST_TIMEOUT_SECONDS ?? 60,
    tenantValidationMsPerSecond: parsed.PLINTH_TENANT_VALIDATION_MS_PER_SECOND ?? 200,
    celWorkers: parsed.PLINTH_CEL_WORKERS ?? 2,
    workers: parsed.PLINTH_WORKERS ?? Math.min(64, availableParallelism()),
    tenantConcurrentRequests: parsed.PLINTH_TENANT_CONCURRENT_REQUESTS ?? 32,
    tenantQueueLength: parsed.PLINTH_TENANT_QUEUE_LENGTH ?? 128,
    maxRequestsInflight: parsed.PLINTH_MAX_REQUESTS_INFLIGHT ?? 64,
    http2MaxStreamsPerConnection: parsed.PLINTH_HTTP2_MAX_STREAMS_PER_CONNECTION || 100,
    tenantQueueWaitMs: parsed.PLINTH_TENANT_QUEUE_WAIT_MS ?? 10000,
    featureGates,
    runtimeConfig,
    auditPolicyFile: parsed.PLINTH_AUDIT_POLICY_FILE ?? '',
    auditLogPath: parsed.PLINTH_AUDIT_LOG_PATH ?? '',
    auditLogMaxSizeMiB: parsed.PLINTH_AUDIT_LOG_MAXSIZE ?? 100,
    auditLogMaxBackups: parsed.PLINTH_AUDIT_LOG_MAXBACKUP ?? 10,
    maxWatchesPerTenant: parsed.PLINTH_MAX_WATCHES_PER_TENANT ?? 5000,
    maxWatchesPerUser: parsed.PLINTH_MAX_WATCHES_PER_USER ?? 2000,
    webhookServiceMap: parsed.PLINTH_WEBHOOK_SERVICE_MAP ?? '',
    webhookRefreshMs: parsed.PLINTH_WEBHOOK_REFRESH_MS ?? 500,
    webhookAllowPrivateNetworks: (parsed.PLINTH_WEBHOOK_PRIVATE_NETWORKS ?? 'allow') === 'allow',
    webhookTrustedTenants: parsed.PLINTH_WEBHOOK_TRUSTED_TENANTS ? parsed.PLINTH_WEBHOOK_TRUSTED_TENANTS.split(',') : [],
    watchPollIntervalMs: parsed.PLINTH_WATCH_POLL_INTERVAL_MS ?? 1000,
    watchBufferBytes: parsed.PLINTH_WATCH_BUFFER_BYTES ?? 1024 * 1024,
    compactionIntervalSeconds: parsed.PLINTH_COMPACTION_INTERVAL_SECONDS ?? 60,
    tls: {
      certFile: parsed.PLINTH_TLS_CERT_FILE,
      keyFile: parsed.PLINTH_TLS_KEY_FILE,
      clientCaFile: parsed.PLINTH_CLIENT_CA_FILE,
      rootCaFile: parsed.PLINTH_ROOT_CA_FILE,
      extraNames: parsed.PLINTH_TLS_SAN ? parsed.PLINTH_TLS_SAN.split(',') : [],
    },
    healthPort: parsed.PLINTH_HEALTH_PORT,
    anonymousAuth: parsed.PLINTH_ANONYMOUS_AUTH !== 'false',
    tokenAuthFile: parsed.PLINTH_TOKEN_AUTH_FILE,
    authenticationConfigFile: parsed.PLINTH_AUTHENTICATION_CONFIG,
    serviceAccountIssuer: parsed.PLINTH_SERVICE_ACCOUNT_ISSUER ?? 'https://kubernetes.default.svc.cluster.local',
    serviceAccountKeyFile: parsed.PLINTH_SERVICE_ACCOUNT_KEY_FILE,
    serviceAccountMaxTokenSeconds: parsed.PLINTH_SERVICE_ACCOUNT_MAX_TOKEN_SECONDS ?? 86400,
    encryption: {
      providerConfigFile: parsed.PLINTH_ENCRYPTION_PROVIDER_CONFIG || undefined,
      automaticReload: parsed.PLINTH_ENCRYPTION_PROVIDER_CONFIG_AUTOMATIC_RELOAD === 'true',
      reloadIntervalSeconds: parsed.PLINTH_ENCRYPTION_PROVIDER_CONFIG_RELOAD_INTERVAL_SECONDS ?? 60,
      rotationRowsPerSecond: parsed.PLINTH_ENCRYPTION_ROTATION_ROWS_PER_SECOND ?? 0,
      readCacheBytes: (parsed.PLINTH_ENCRYPTION_READ_CACHE_MB ?? 64) * 1024 * 1024,
      keyStoreUrl: parsed.PLINTH_KEY_STORE_URL || undefined,
      kmsStatusIntervalSeconds: parsed.PLINTH_KMS_STATUS_INTERVAL_SECONDS,
    },
    adaptiveConcurrency: {
      enabled: (parsed.PLINTH_ADAPTIVE_CONCURRENCY ?? 'on') === 'on',
      minSeats: parsed.PLINTH_ADAPTIVE_CONCURRENCY_MIN_SEATS ?? 8,
      targetDelayMs: parsed.PLINTH_ADAPTIVE_CONCURRENCY_TARGET_DELAY_MS ?? 10,
      targetUtilization: (parsed.PLINTH_ADAPTIVE_CONCURRENCY_TARGET_UTILIZATION ?? 90) / 100,
    },
  };
}
