import { Global, Module, type Provider } from '@nestjs/common';
import {
  ChangeLogRepository,
  type Database,
  ObjectListRepository,
  ObjectStoreRepository,
  OwnerRepository,
  QuotaRepository,
  TenantRepository,
} from '@plinth/storage';
import { DATABASE } from '../database/database.module.js';
import { Metrics } from '../observability/metrics.js';
import { TenantCache } from './tenant-cache.js';

const REPOSITORIES = [ObjectListRepository, ChangeLogRepository, TenantRepository, QuotaRepository, OwnerRepository];

function repository(type: (typeof REPOSITORIES)[number]): Provider {
  return { provide: type, useFactory: (db: Database) => new type(db), inject: [DATABASE] };
}

/**
 * The repositories of @plinth/storage over the server's database (the only
 * SQL there is), and the short-lived cache of tenant rows every request
 * reads: global, as every concern reads or writes storage.
 */
@Global()
@Module({
  providers: [
    ...REPOSITORIES.map(repository),
    {
      // Writes are grouped into batches (group commit); each batch's size is observed on /metrics.
      provide: ObjectStoreRepository,
      useFactory: (db: Database, metrics: Metrics) => new ObjectStoreRepository(db, { onBatch: (size) => metrics.writeBatchSize.observe(size) }),
      inject: [DATABASE, Metrics],
    },
    { provide: TenantCache, useFactory: (tenants: TenantRepository) => new TenantCache(tenants), inject: [TenantRepository] },
  ],
  exports: [...REPOSITORIES, ObjectStoreRepository, TenantCache],
})
export class StorageModule {}
