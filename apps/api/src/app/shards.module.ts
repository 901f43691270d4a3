import { Global, Inject, Module, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import type { Logger } from 'pino';
import { createRedisClient, ObjectStoreRepository, RedisRevisionLeaseStore } from '@plinth/storage';
import type { KubeObject } from '@plinth/apimachinery';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { DatabaseConnection } from '../database/database-connection.js';
import { PLATFORM_TENANT, TENANT_STORAGE_RESOURCE } from '../kinds/tenant/tenant-api.js';
import { LOGGER } from '../observability/logger.js';
import { ShardCatalog } from '../sharding/shard-catalog.js';
import { ShardPool } from '../sharding/shard-pool.js';
import { registerShardMetrics } from '../sharding/shard-metrics.js';
import { Metrics } from '../observability/metrics.js';
import { TenantDirectory } from '../sharding/tenant-directory.js';
import { createStandbyReads } from '../sharding/read-replicas.js';
import { StandbyReadRouter } from '../sharding/standby-read-router.js';

/** The directory's read of one Tenant object, straight from the platform's database (internal: no durability wait). */
function tenantReader(conn: DatabaseConnection) {
  const objects = new ObjectStoreRepository(conn.db);
  return async (name: string): Promise<KubeObject | undefined> =>
    (await objects.get({ tenant: PLATFORM_TENANT, resource: TENANT_STORAGE_RESOURCE, namespace: '', name }, undefined, true))?.body as KubeObject | undefined;
}

/**
 * Shards, below storage: the tenant directory (which shard each tenant
 * lives on) and the replica's pools to every shard, which route the
 * repositories' statements by tenant. Global: the repositories, the watch
 * pipelines and health read them. Shard objects connect shards through
 * the sharding controllers (ShardingModule).
 */
@Global()
@Module({
  providers: [
    { provide: ShardCatalog, useFactory: () => new ShardCatalog() },
    { provide: TenantDirectory, useFactory: (conn: DatabaseConnection) => new TenantDirectory(tenantReader(conn)), inject: [DatabaseConnection] },
    {
      provide: ShardPool,
      useFactory: (directory: TenantDirectory, conn: DatabaseConnection, config: AppConfig, logger: Logger, metrics: Metrics) => {
        // Cluster mode: each shard's revision ceiling is recorded in Redis, outside any shard's failover (revision-fence.ts).
        const leaseStore = config.redisUrl ? new RedisRevisionLeaseStore(createRedisClient(config.redisUrl, 'plinth-revision-ceiling', logger)) : undefined;
        const pool = new ShardPool(directory, { db: conn.db, url: conn.url }, config.dbPoolSize, logger, { leaseStore, block: config.revisionCeilingBlock });
        registerShardMetrics(metrics.registry, pool);
        return pool;
      },
      inject: [TenantDirectory, DatabaseConnection, APP_CONFIG, LOGGER, Metrics],
    },
    {
      // Reads that allow staleness go to a shard's read replica when it can serve them (docs/storage.md).
      provide: StandbyReadRouter,
      useFactory: (pool: ShardPool, directory: TenantDirectory, config: AppConfig, logger: Logger, metrics: Metrics) =>
        new StandbyReadRouter(createStandbyReads(config, pool, directory, logger), metrics.registry, logger),
      inject: [ShardPool, TenantDirectory, APP_CONFIG, LOGGER, Metrics],
    },
  ],
  exports: [TenantDirectory, ShardPool, ShardCatalog, StandbyReadRouter],
})
export class ShardsModule implements OnModuleInit, OnApplicationShutdown {
  constructor(
    @Inject(ShardPool) private readonly pool: ShardPool,
    @Inject(StandbyReadRouter) private readonly standbyReads: StandbyReadRouter,
  ) {}

  onModuleInit(): void {
    this.pool.start();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.pool.stop();
    await this.standbyReads.close();
  }
}
