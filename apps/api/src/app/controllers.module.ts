import { Global, Inject, Module, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import type { Logger } from 'pino';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { DatabaseConnection } from '../database/database-connection.js';
import { PostStartHooks } from '../lifecycle/post-start-hooks.js';
import { JOB_QUEUE, type JobQueue } from '../jobs/job-queue.js';
import { Metrics } from '../observability/metrics.js';
import { LOGGER } from '../observability/logger.js';
import { ControllerManager } from '../controllers/controller-manager.js';
import { ControllerMetrics } from '../controllers/controller-metrics.js';
import { SharedInformerFactory } from '../controllers/shared-informer-factory.js';
import { type Storage, STORAGE, TenantRepository } from '@plinth/storage';
import { OBSERVE_CHANGES, type ObserveChanges } from '../watch/observe-changes.js';

/**
 * The controller manager and the shared informers its controllers read
 * from (global, as the job queue): modules register their
 * controllers with {@link ControllerManager} when they are built; the
 * controllers start once the server listens and every post-start hook
 * registered before has run (tenants provisioned), on every replica in
 * single-node mode and on the elected one in cluster mode (REDIS_URL) or
 * among the worker processes of one host (PLINTH_WORKERS > 1), and
 * stop at shutdown before the database closes.
 */
@Global()
@Module({
  providers: [
    { provide: ControllerMetrics, useFactory: (metrics: Metrics) => new ControllerMetrics(metrics.registry), inject: [Metrics] },
    {
      provide: ControllerManager,
      useFactory: (config: AppConfig, conn: DatabaseConnection, metrics: ControllerMetrics, logger: Logger) =>
        new ControllerManager(config.redisUrl || config.worker ? { kind: 'cluster', databaseUrl: conn.url } : { kind: 'single-node' }, metrics, logger),
      inject: [APP_CONFIG, DatabaseConnection, ControllerMetrics, LOGGER],
    },
    {
      provide: SharedInformerFactory,
      useFactory: (storage: Storage, tenants: TenantRepository, observe: ObserveChanges, logger: Logger) =>
        new SharedInformerFactory({ list: (q) => storage.list(q), tenants: () => tenants.list(), follow: observe }, logger),
      inject: [STORAGE, TenantRepository, OBSERVE_CHANGES, LOGGER],
    },
  ],
  exports: [ControllerManager, SharedInformerFactory],
})
export class ControllersModule implements OnApplicationBootstrap, OnApplicationShutdown {
  constructor(
    @Inject(ControllerManager) private readonly manager: ControllerManager,
    @Inject(PostStartHooks) private readonly postStart: PostStartHooks,
    @Inject(JOB_QUEUE) jobs: JobQueue,
  ) {
    // One of several worker processes runs the scheduled jobs, elected as a controller.
    if (jobs.election) manager.register(jobs.election);
  }

  /** After every module registered its controllers and post-start hooks: start them last of all hooks. */
  onApplicationBootstrap(): void {
    this.postStart.add('controllers/start', () => this.manager.start());
  }

  async onApplicationShutdown(): Promise<void> {
    await this.manager.stop();
  }
}
