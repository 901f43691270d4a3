import { Inject, Module, type OnApplicationShutdown } from '@nestjs/common';
import type { Logger } from 'pino';
import { STORAGE, type Storage, TenantSnapshotRepository } from '@plinth/storage';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { ControllerManager } from '../controllers/controller-manager.js';
import { SharedInformerFactory } from '../controllers/shared-informer-factory.js';
import { PLATFORM_TENANT, TENANT_STORAGE_RESOURCE } from '../kinds/tenant/tenant-api.js';
import { LOGGER } from '../observability/logger.js';
import { Metrics } from '../observability/metrics.js';
import { ResourceRegistry } from '../registry/resource-registry.js';
import { ResourceStoreService } from '../resource-store/resource-store.service.js';
import { ShardPool } from '../sharding/shard-pool.js';
import { S3SnapshotTarget } from '../snapshots/s3-snapshot-target.js';
import { SNAPSHOT_CATALOG, SnapshotCatalog } from '../snapshots/snapshot-catalog.js';
import { SnapshotMetrics } from '../snapshots/snapshot-metrics.js';
import { SnapshotScheduler } from '../snapshots/snapshot-scheduler.js';
import { DirectorySnapshotTarget, type SnapshotTarget } from '../snapshots/snapshot-target.js';
import { TenantSnapshotController } from '../snapshots/tenant-snapshot.controller.js';
import { TENANT_SNAPSHOTS, TenantSnapshotService } from '../snapshots/tenant-snapshot.service.js';
import { TenantSourceRestorer } from '../snapshots/tenant-source-restorer.js';
import { tenantStatusWriter } from '../snapshots/tenant-status.js';
import { ResourceStoreModule } from './resource-store.module.js';

function targetOf(config: AppConfig): SnapshotTarget | undefined {
  const t = config.snapshotTarget;
  if (!t) return undefined;
  return t.kind === 'directory' ? new DirectorySnapshotTarget(t.directory) : new S3SnapshotTarget(t);
}

/**
 * Tenant snapshots (docs/snapshots.md): the export and restore service
 * (served as the Tenant's `snapshot` subresource, see ResourceApiModule)
 * and `GET /clusters/{tenant}/snapshot` for a tenant's own members; the
 * snapshot target (PLINTH_SNAPSHOT_DIR or PLINTH_SNAPSHOT_S3_URL) with the
 * `snapshots` subresource listing it, the snapshot scheduler (when a target
 * is configured) and the restorer of spec.source, both controllers of the
 * ControllerManager.
 */
@Module({
  imports: [ResourceStoreModule],
  providers: [
    {
      provide: TENANT_SNAPSHOTS,
      useFactory: (storage: Storage, shards: ShardPool, kinds: ResourceRegistry, logger: Logger) =>
        new TenantSnapshotService({ storage, snapshots: new TenantSnapshotRepository(shards), kinds, logger }),
      inject: [STORAGE, ShardPool, ResourceRegistry, LOGGER],
    },
    {
      provide: SNAPSHOT_CATALOG,
      useFactory: (
        config: AppConfig,
        storage: Storage,
        shards: ShardPool,
        metrics: Metrics,
        store: ResourceStoreService,
        informers: SharedInformerFactory,
        manager: ControllerManager,
        logger: Logger,
      ) => {
        const target = targetOf(config);
        const snapshotMetrics = new SnapshotMetrics(metrics.registry);
        const snapshots = new TenantSnapshotRepository(shards);
        const tenantObjects = informers.informerFor({ tenant: PLATFORM_TENANT, resource: TENANT_STORAGE_RESOURCE });
        const writeStatus = tenantStatusWriter(store);
        if (target) {
          const platform = { schedule: config.snapshotSchedule, keep: config.snapshotKeep, recipients: config.snapshotRecipients };
          manager.register(new SnapshotScheduler({ tenantObjects, queues: manager, exports: { storage, snapshots }, target, platform, writeStatus, metrics: snapshotMetrics, logger }));
        }
        manager.register(new TenantSourceRestorer({ tenantObjects, queues: manager, storage, snapshots, target, writeStatus, metrics: snapshotMetrics, logger }));
        return new SnapshotCatalog(storage, target);
      },
      inject: [APP_CONFIG, STORAGE, ShardPool, Metrics, ResourceStoreService, SharedInformerFactory, ControllerManager, LOGGER],
    },
  ],
  controllers: [TenantSnapshotController],
  exports: [TENANT_SNAPSHOTS, SNAPSHOT_CATALOG],
})
export class SnapshotsModule implements OnApplicationShutdown {
  constructor(@Inject(SNAPSHOT_CATALOG) private readonly catalog: SnapshotCatalog) {}

  /** Closes the S3 client's connections. */
  onApplicationShutdown(): void {
    if (this.catalog.target instanceof S3SnapshotTarget) this.catalog.target.close();
  }
}
