import { Global, Module, type Provider } from '@nestjs/common';
import {
  ChangeLogRepository,
  ObjectListRepository,
  ObjectStoreRepository,
  OwnerRepository,
  QuotaRepository,
  TenantRepository,
} from '@plinth/storage';
import { Metrics } from '../observability/metrics.js';
import { ShardPool } from '../sharding/shard-pool.js';
import { TenantCache } from '../kinds/tenant/tenant-cache.js';

const REPOSITORIES = [ObjectListRepository, ChangeLogRepository, TenantRepository, QuotaRepository, OwnerRepository];

function repository(type: (typeof REPOSITORIES)[number]): Provider {
  return { provide: type, useFactory: (shards: ShardPool) => new type(shards), inject: [ShardPool] };
}

/**
 * The repositories of @plinth/storage over every shard (the only SQL there
 * is: each statement goes to the shard of the tenant it addresses, see
 * ShardPool), and the short-lived cache of tenant rows every request
 * reads: global, as every concern reads or writes storage.
 */
@Global()
@Module({
  providers: [
    ...REPOSITORIES.map(repository),
    {
      // Writes are grouped into batches (group commit); each batch's size is observed on /metrics.
      provide: ObjectStoreRepository,
      useFactory: (shards: ShardPool, metrics: Metrics) => new ObjectStoreRepository(shards, { onBatch: (size) => metrics.writeBatchSize.observe(size) }),
      inject: [ShardPool, Metrics],
    },
    { provide: TenantCache, useFactory: (tenants: TenantRepository) => new TenantCache(tenants), inject: [TenantRepository] },
  ],
  exports: [...REPOSITORIES, ObjectStoreRepository, TenantCache],
})
export class StorageModule {}
