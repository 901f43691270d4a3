import 'reflect-metadata';
import { Type } from 'class-transformer';
import { IsIn, IsInt, IsOptional, IsString, Matches, Max, Min, Validate } from 'class-validator';
import { PositiveGoDuration } from './go-duration.constraint.js';

/**
 * The environment Plinth reads, validated once at start-up (by loadConfig in
 * app-config.ts). One class for every variable on purpose: class-validator
 * reports the bad ones in the order they are declared here, so this order is
 * the order of the lines of a ConfigError's message.
 */
export class EnvironmentVariables {
  @IsOptional() @Type(() => Number) @IsInt() @Min(0) @Max(65535)
  PORT?: number;

  @IsOptional() @IsString() @Matches(/^[A-Za-z0-9.:\-[\]]+$/, { message: 'HOST must be a hostname or IP address' })
  HOST?: string;

  @IsOptional() @IsString()
  PLINTH_DATA_DIR?: string;

  @IsOptional() @Matches(/^postgres(ql)?:\/\/\S+$/, { message: 'DATABASE_URL must be a postgres:// or postgresql:// URL' })
  DATABASE_URL?: string;

  /** A Redis server, or Sentinels and a master name (`redis+sentinel://h1:26379,h2:26379/mymaster`; parsed by readStorageConfig). */
  @IsOptional() @Matches(/^rediss?(\+sentinel)?:\/\/\S+$/i, { message: 'REDIS_URL must be a redis://, rediss://, redis+sentinel:// or rediss+sentinel:// URL' })
  REDIS_URL?: string;

  /** A streaming standby of DATABASE_URL's primary for reads that allow staleness (docs/storage.md, "Reads from standbys"). */
  @IsOptional() @Matches(/^postgres(ql)?:\/\/\S+$/, { message: 'PLINTH_READ_REPLICA_URL must be a postgres:// or postgresql:// URL' })
  PLINTH_READ_REPLICA_URL?: string;

  /** How long a read replica may take to connect or answer a statement before the read goes to the primary (ms). */
  @IsOptional() @Type(() => Number) @IsInt() @Min(50) @Max(60000)
  PLINTH_READ_REPLICA_TIMEOUT_MS?: number;

  /** How far behind the primary a read replica may be for resourceVersion=0 reads (ms). */
  @IsOptional() @Type(() => Number) @IsInt() @Min(0) @Max(3600000)
  PLINTH_READ_REPLICA_MAX_LAG_MS?: number;

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

  /** How far ahead of each shard's revision counter its ceiling is reserved in Redis (docs/operations.md). */
  @IsOptional() @Type(() => Number) @IsInt() @Min(100)
  PLINTH_REVISION_CEILING_BLOCK?: number;

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

  /** How long an Event is kept after its last write, a Go duration (kube-apiserver's --event-ttl; default 1h). */
  @IsOptional() @Validate(PositiveGoDuration)
  PLINTH_EVENT_TTL?: string;

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

  @IsOptional() @IsString()
  PLINTH_ADVERTISE_URL?: string;

  @IsOptional() @IsIn(['true', 'false'])
  PLINTH_ANONYMOUS_AUTH?: string;

  @IsOptional() @IsString()
  PLINTH_TOKEN_AUTH_FILE?: string;

  @IsOptional() @IsString()
  PLINTH_AUTHENTICATION_CONFIG?: string;

  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(86400)
  PLINTH_AUTHENTICATION_CONFIG_RELOAD_INTERVAL_SECONDS?: number;

  /** An AuthorizationConfiguration file (upstream's --authorization-config): the ordered chain of authorizers (docs/authorization.md). */
  @IsOptional() @IsString()
  PLINTH_AUTHORIZATION_CONFIG?: string;

  /** How often that file is checked for changes besides watching its folder (upstream: every minute). */
  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(3600)
  PLINTH_AUTHORIZATION_CONFIG_RELOAD_INTERVAL_SECONDS?: number;

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

  /** An apiserver.config.k8s.io/v1 TracingConfiguration file (kube-apiserver's --tracing-config-file); unset, no tracing. */
  @IsOptional() @IsString()
  PLINTH_TRACING_CONFIG_FILE?: string;

  /** Scheduled tenant snapshots (docs/snapshots.md): a directory to write them to. */
  @IsOptional() @IsString()
  PLINTH_SNAPSHOT_DIR?: string;

  /** Or an S3 bucket and key prefix: `s3://bucket[/prefix]` (one of PLINTH_SNAPSHOT_DIR and this). */
  @IsOptional() @Matches(/^s3:\/\/[a-z0-9][a-z0-9.-]{1,61}[a-z0-9](\/\S*)?$/, { message: 'PLINTH_SNAPSHOT_S3_URL must be s3://<bucket>[/<prefix>]' })
  PLINTH_SNAPSHOT_S3_URL?: string;

  /** An S3-compatible endpoint (default: AWS's, by region); path-style addressing is used when set. */
  @IsOptional() @Matches(/^https?:\/\/\S+$/, { message: 'PLINTH_SNAPSHOT_S3_ENDPOINT must be an http:// or https:// URL' })
  PLINTH_SNAPSHOT_S3_ENDPOINT?: string;

  @IsOptional() @IsString()
  PLINTH_SNAPSHOT_S3_REGION?: string;

  /** S3 credentials; unset: the AWS SDK's default chain (AWS_ACCESS_KEY_ID…, profiles, instance roles). */
  @IsOptional() @IsString()
  PLINTH_SNAPSHOT_S3_ACCESS_KEY_ID?: string;

  @IsOptional() @IsString()
  PLINTH_SNAPSHOT_S3_SECRET_ACCESS_KEY?: string;

  /** The platform's schedule (cron) for every tenant without its own spec.snapshots.schedule; unset: only tenants with one. */
  @IsOptional() @IsString()
  PLINTH_SNAPSHOT_SCHEDULE?: string;

  /** Snapshots kept per tenant when its spec.snapshots.keep is unset (older ones are deleted). */
  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(10000)
  PLINTH_SNAPSHOT_KEEP?: number;

  /** age X25519 recipients (age1…, comma-separated) Secrets are sealed to when a tenant names none. */
  @IsOptional() @Matches(/^age1[02-9ac-hj-np-z]{58}(,age1[02-9ac-hj-np-z]{58})*$/, { message: 'PLINTH_SNAPSHOT_RECIPIENTS must be age X25519 public keys (age1…), comma-separated' })
  PLINTH_SNAPSHOT_RECIPIENTS?: string;
}
