import { Global, Module, type Provider } from '@nestjs/common';
import {
  ChangeLogRepository,
  createPostgresStorage,
  ObjectListRepository,
  ObjectStoreRepository,
  OwnerRepository,
  type PostgresStorage,
  QuotaRepository,
  STORAGE,
  TenantRepository,
} from '@plinth/storage';
import type { Logger } from 'pino';
import { LOGGER } from '../observability/logger.js';
import { Metrics } from '../observability/metrics.js';
import { TRACING, type Tracing } from '../observability/tracing.js';
import { ShardPool } from '../sharding/shard-pool.js';
import { TenantCache } from '../kinds/tenant/tenant-cache.js';

const REPOSITORIES = [TenantRepository, QuotaRepository, OwnerRepository];

function repository(type: (typeof REPOSITORIES)[number]): Provider {
  return { provide: type, useFactory: (shards: ShardPool) => new type(shards), inject: [ShardPool] };
}

/**
 * The object storage ({@link STORAGE}: the PostgreSQL implementation of
 * the Storage interface) and the repositories of @plinth/storage over every
 * shard (the only SQL there is: each statement goes to the shard of the
 * tenant it addresses, see ShardPool), and the short-lived cache of tenant
 * rows every request reads: global, as every concern reads or writes
 * storage. The object, list and change-log repositories are the storage's
 * own (one write batcher per shard), for what is special to PostgreSQL.
 */
/** `f`, called at most once a minute; later calls within the minute are dropped. */
function everyMinute<T>(f: (arg: T) => void): (arg: T) => void {
  let last = -Infinity;
  return (arg) => {
    if (Date.now() - last < 60_000) return;
    last = Date.now();
    f(arg);
  };
}

@Global()
@Module({
  providers: [
    ...REPOSITORIES.map(repository),
    {
      // Writes are grouped into batches (group commit); each batch's size is observed on /metrics. A failed cleaning of
      // the GIN pending lists (migration 0025) is logged at most once a minute: it is retried after the next writes.
      provide: STORAGE,
      useFactory: (shards: ShardPool, metrics: Metrics, tracing: Tracing | null, logger: Logger) =>
        createPostgresStorage({
          source: shards,
          batching: { onBatch: (size) => metrics.writeBatchSize.observe(size), onGinCleanError: everyMinute((err) => logger.warn({ err }, 'cleaning the GIN pending lists failed (autovacuum still cleans them)')) },
          tracer: tracing ? { operation: (op, key, run) => tracing.storageOperation(op, key, run) } : undefined,
        }),
      inject: [ShardPool, Metrics, TRACING, LOGGER],
    },
    { provide: ObjectStoreRepository, useFactory: (s: PostgresStorage) => s.objects, inject: [STORAGE] },
    { provide: ObjectListRepository, useFactory: (s: PostgresStorage) => s.lists, inject: [STORAGE] },
    { provide: ChangeLogRepository, useFactory: (s: PostgresStorage) => s.changes, inject: [STORAGE] },
    { provide: TenantCache, useFactory: (tenants: TenantRepository) => new TenantCache(tenants), inject: [TenantRepository] },
  ],
  exports: [...REPOSITORIES, STORAGE, ObjectStoreRepository, ObjectListRepository, ChangeLogRepository, TenantCache],
})
export class StorageModule {}
