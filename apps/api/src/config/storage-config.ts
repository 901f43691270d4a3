import { rejected } from './config-error.js';
import type { EnvironmentVariables } from './environment-variables.dto.js';
import { type ConfiguredShard, parseShardList } from './shard-list.js';
import { parseGoDuration } from '@plinth/apimachinery';
import { parseRedisUrl } from '@plinth/storage';

/** The storage part of AppConfig: the databases, Redis, the tenants and shards created at start, and how long history is kept. */
export interface StorageConfig {
  dataDir: string;
  /** Undefined: run an embedded PostgreSQL in `dataDir`. */
  databaseUrl?: string;
  /** Set: cluster mode (Redis fan-out, BullMQ); a server or Sentinels and a master name (parseRedisUrl). */
  redisUrl?: string;
  /** PLINTH_READ_REPLICA_URL: a standby of the platform database for reads that allow staleness, with its timeout and lag bound. */
  readReplica?: { url: string; timeoutMs: number; maxLagMs: number };
  /** Tenants to create at start-up besides `default`. */
  tenants: string[];
  /** PLINTH_SHARDS: shards registered at start (a Secret and a Shard object each) when missing. */
  shards: ConfiguredShard[];
  embeddedPgPort: number;
  dbPoolSize: number;
  /** PLINTH_ROW_LEVEL_SECURITY: the request path runs under PostgreSQL row-level security, one tenant per statement. */
  rowLevelSecurity: boolean;
  historyRetentionSeconds: number;
  compactionIntervalSeconds: number;
  /** PLINTH_EVENT_TTL in milliseconds: Events not written for that long are removed (upstream's --event-ttl, default 1h). */
  eventTtlMs: number;
}

/** The storage settings of the validated environment, defaults filled in. Pure; throws ConfigError when PLINTH_SHARDS does not parse. */
export function readStorageConfig(env: EnvironmentVariables): StorageConfig {
  let shards: ConfiguredShard[];
  try {
    shards = parseShardList(env.PLINTH_SHARDS ?? '');
  } catch (err) {
    throw rejected('PLINTH_SHARDS', err);
  }
  if (env.REDIS_URL) {
    try {
      parseRedisUrl(env.REDIS_URL);
    } catch (err) {
      throw rejected('REDIS_URL', err);
    }
  }
  return {
    dataDir: env.PLINTH_DATA_DIR ?? './.plinth',
    databaseUrl: env.DATABASE_URL,
    redisUrl: env.REDIS_URL,
    readReplica: env.PLINTH_READ_REPLICA_URL
      ? { url: env.PLINTH_READ_REPLICA_URL, timeoutMs: env.PLINTH_READ_REPLICA_TIMEOUT_MS ?? 1000, maxLagMs: env.PLINTH_READ_REPLICA_MAX_LAG_MS ?? 5000 }
      : undefined,
    tenants: env.PLINTH_TENANTS ? env.PLINTH_TENANTS.split(',') : [],
    shards,
    embeddedPgPort: env.PLINTH_EMBEDDED_PG_PORT ?? 54329,
    dbPoolSize: env.PLINTH_DB_POOL_SIZE ?? 20,
    rowLevelSecurity: env.PLINTH_ROW_LEVEL_SECURITY !== 'off',
    historyRetentionSeconds: env.PLINTH_HISTORY_RETENTION_SECONDS ?? 24 * 3600,
    compactionIntervalSeconds: env.PLINTH_COMPACTION_INTERVAL_SECONDS ?? 60,
    // Validated as a positive Go duration (PositiveGoDuration).
    eventTtlMs: env.PLINTH_EVENT_TTL ? parseGoDuration(env.PLINTH_EVENT_TTL) : 3600_000,
  };
}
