import { Inject, Module, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import type { Logger } from 'pino';
import { STORAGE, type Storage, TenantMoveRepository, TenantRepository } from '@plinth/storage';
import type { KubeObject } from '@plinth/apimachinery';
import { ControllerManager } from '../controllers/controller-manager.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { ResourceRegistry } from '../registry/resource-registry.js';
import { platformShardResource } from '../kinds/shard/shard.resource.js';
import { PLATFORM_TENANT, TENANT_STORAGE_RESOURCE, type TenantObject } from '../kinds/tenant/tenant-api.js';
import { LOGGER } from '../observability/logger.js';
import { ResourceStoreService } from '../resource-store/resource-store.service.js';
import { ResourceStoreModule } from './resource-store.module.js';
import { WatchService } from '../watch/watch.service.js';
import { followTenantObjects } from '../sharding/directory-feed.js';
import { SHARD_STORAGE_RESOURCE, ShardCatalog } from '../sharding/shard-catalog.js';
import { ShardPool } from '../sharding/shard-pool.js';
import { ShardRegistry } from '../sharding/shard-registry.js';
import { ShardStatusController } from '../sharding/shard-status.controller.js';
import { TenantDirectory } from '../sharding/tenant-directory.js';
import { TenantMover } from '../sharding/tenant-mover.js';
import { SharedInformerFactory } from '../controllers/shared-informer-factory.js';
import { Metrics } from '../observability/metrics.js';

/**
 * Shards as the platform runs them: on every replica, the directory fed by
 * the Tenant objects' change stream (and the watches of a tenant that moved
 * ended on the shard it left) and the registry that connects every Shard
 * object's database; once per cluster, the controller that writes the
 * Shards' status and the `default` Shard object.
 */
@Module({
  imports: [ResourceStoreModule],
  providers: [
    {
      provide: ShardRegistry,
      useFactory: (catalog: ShardCatalog, pool: ShardPool, objects: Storage, lists: Storage, watch: WatchService, logger: Logger) =>
        new ShardRegistry({
          catalog,
          pool,
          objects,
          listShards: async () => (await lists.list({ tenant: PLATFORM_TENANT, resource: SHARD_STORAGE_RESOURCE })).items.map((i) => i.body as KubeObject),
          changes: watch.cache,
          logger,
        }),
      inject: [ShardCatalog, ShardPool, STORAGE, STORAGE, WatchService, LOGGER],
    },
    {
      provide: TenantMover,
      useFactory: (pool: ShardPool, objects: Storage, lists: Storage, store: ResourceStoreService, informers: SharedInformerFactory, manager: ControllerManager, metrics: Metrics, logger: Logger) => {
        const listTenants = async () => (await lists.list({ tenant: PLATFORM_TENANT, resource: TENANT_STORAGE_RESOURCE })).items.map((i) => i.body as TenantObject);
        const tenants = informers.informerFor({ tenant: PLATFORM_TENANT, resource: TENANT_STORAGE_RESOURCE });
        const mover = new TenantMover({ pool, moves: new TenantMoveRepository(), objects, store, tenants, listTenants, queues: manager, registry: metrics.registry, logger });
        manager.register(mover);
        return mover;
      },
      inject: [ShardPool, STORAGE, STORAGE, ResourceStoreService, SharedInformerFactory, ControllerManager, Metrics, LOGGER],
    },
    {
      provide: ShardStatusController,
      useFactory: (
        catalog: ShardCatalog,
        pool: ShardPool,
        tenants: TenantRepository,
        store: ResourceStoreService,
        objects: Storage,
        manager: ControllerManager,
        logger: Logger,
        config: AppConfig,
        registry: ResourceRegistry,
      ) => {
        const secretResource = registry.lookup(PLATFORM_TENANT, '', 'v1', 'secrets')!;
        const controller = new ShardStatusController({ catalog, pool, tenants, store, objects, shardResource: platformShardResource, configured: config.shards, secretResource, logger });
        manager.register(controller);
        return controller;
      },
      inject: [ShardCatalog, ShardPool, TenantRepository, ResourceStoreService, STORAGE, ControllerManager, LOGGER, APP_CONFIG, ResourceRegistry],
    },
  ],
})
export class ShardingModule implements OnModuleInit, OnApplicationShutdown {
  private stops: Array<() => void> = [];

  constructor(
    @Inject(TenantDirectory) private readonly directory: TenantDirectory,
    @Inject(WatchService) private readonly watch: WatchService,
    @Inject(STORAGE) private readonly lists: Storage,
    @Inject(ShardRegistry) private readonly registry: ShardRegistry,
    @Inject(ShardStatusController) _status: ShardStatusController,
    @Inject(TenantMover) _mover: TenantMover,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  async onModuleInit(): Promise<void> {
    this.stops.push(this.directory.onMove((tenant, from, to) => this.watch.endMovedTenant(tenant, `tenant ${tenant} moved from shard ${from} to ${to}`)));
    this.stops.push(
      await followTenantObjects({
        directory: this.directory,
        changes: this.watch.cache,
        listTenants: async () => (await this.lists.list({ tenant: PLATFORM_TENANT, resource: TENANT_STORAGE_RESOURCE })).items.map((i) => i.body as KubeObject),
        onError: (err) => this.logger.warn({ err: (err as Error).message }, 'tenant directory: reload failed'),
      }),
    );
    await this.registry.start();
  }

  async onApplicationShutdown(): Promise<void> {
    for (const stop of this.stops) stop();
    this.stops = [];
    await this.registry.stop();
  }
}
