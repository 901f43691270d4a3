import { Global, Inject, Module, type OnModuleInit } from '@nestjs/common';
import type { Logger } from 'pino';
import { ChangeLogRepository, DEFAULT_SHARD, type Storage, STORAGE } from '@plinth/storage';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { DatabaseConnection } from '../database/database-connection.js';
import { LOGGER } from '../observability/logger.js';
import { ShardPool } from '../sharding/shard-pool.js';
import { TenantDirectory } from '../sharding/tenant-directory.js';
import { StandbyReadRouter } from '../sharding/standby-read-router.js';
import { Metrics } from '../observability/metrics.js';
import { TRACING, type Tracing } from '../observability/tracing.js';
import { OBSERVE_CHANGES, type ObserveChanges } from '../watch/observe-changes.js';
import { HistoryCompactionJob } from '../watch/history-compaction.job.js';
import { WatchService } from '../watch/watch.service.js';

/**
 * Watches and the change pipeline every replica runs (relay, cache, Redis
 * fan-out, compaction). Global: caches of every concern (CRDs, webhooks,
 * policies, RBAC, tenants, ServiceAccounts) follow its change stream
 * through {@link OBSERVE_CHANGES}. Started when the module initialises;
 * watches are ended by the shutdown sequence (lifecycle/); history
 * compaction runs as a job (jobs/).
 */
@Global()
@Module({
  providers: [
    {
      provide: WatchService,
      useFactory: (
        config: AppConfig,
        logger: Logger,
        metrics: Metrics,
        conn: DatabaseConnection,
        changes: ChangeLogRepository,
        lists: Storage,
        pool: ShardPool,
        directory: TenantDirectory,
        standby: StandbyReadRouter,
        tracing: Tracing | null,
      ) => {
        const service = new WatchService({
          config,
          logger,
          registry: metrics.registry,
          changes,
          lists,
          standby,
          onDispatch: tracing ? (change, watchers, startedAt) => tracing.fanOut(change, watchers, startedAt) : undefined,
          shards: { platform: { db: conn.db, url: conn.url }, shardOf: (t) => directory.peek(t) ?? DEFAULT_SHARD, placementOf: (t) => directory.placement(t), listen: (l) => pool.listen(l) },
        });
        // What watchers saw counts in the bound a failover's fence raises the revision counter past.
        pool.onSeenRevision((shard) => service.shardPipelines().get(shard)?.cache.revision ?? 0);
        return service;
      },
      inject: [APP_CONFIG, LOGGER, Metrics, DatabaseConnection, ChangeLogRepository, STORAGE, ShardPool, TenantDirectory, StandbyReadRouter, TRACING],
    },
    {
      provide: OBSERVE_CHANGES,
      useFactory: (watch: WatchService): ObserveChanges => (resource, observer) => watch.cache.observe(resource, observer),
      inject: [WatchService],
    },
    HistoryCompactionJob,
  ],
  exports: [WatchService, OBSERVE_CHANGES],
})
export class WatchModule implements OnModuleInit {
  constructor(@Inject(WatchService) private readonly watch: WatchService) {}

  async onModuleInit(): Promise<void> {
    await this.watch.start();
  }
}
