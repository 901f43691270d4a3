import { Module } from '@nestjs/common';
import type { Logger } from 'pino';
import { STORAGE, type Storage, TenantSnapshotRepository } from '@plinth/storage';
import { LOGGER } from '../observability/logger.js';
import { ResourceRegistry } from '../registry/resource-registry.js';
import { ShardPool } from '../sharding/shard-pool.js';
import { TenantSnapshotController } from '../snapshots/tenant-snapshot.controller.js';
import { TENANT_SNAPSHOTS, TenantSnapshotService } from '../snapshots/tenant-snapshot.service.js';

/**
 * Tenant snapshots (docs/snapshots.md): the export and restore service
 * (served as the Tenant's `snapshot` subresource, see ResourceApiModule)
 * and `GET /clusters/{tenant}/snapshot` for a tenant's own members.
 */
@Module({
  providers: [
    {
      provide: TENANT_SNAPSHOTS,
      useFactory: (storage: Storage, shards: ShardPool, kinds: ResourceRegistry, logger: Logger) =>
        new TenantSnapshotService({ storage, snapshots: new TenantSnapshotRepository(shards), kinds, logger }),
      inject: [STORAGE, ShardPool, ResourceRegistry, LOGGER],
    },
  ],
  controllers: [TenantSnapshotController],
  exports: [TENANT_SNAPSHOTS],
})
export class SnapshotsModule {}
