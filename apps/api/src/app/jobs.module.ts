import { BullModule, getQueueToken } from '@nestjs/bullmq';
import { type DynamicModule, Global, Inject, Module, type BeforeApplicationShutdown, type Provider } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import type { ConnectionOptions, Queue } from 'bullmq';
import type { Logger } from 'pino';
import { redisKeyPrefix, redisOptionsFromUrl } from '@plinth/storage';
import type { AppConfig } from '../config/app-config.js';
import { DatabaseConnection } from '../database/database-connection.js';
import { LOGGER } from '../observability/logger.js';
import { BullJobQueue, HistoryQueueWorker } from '../jobs/bullmq-job-queue.js';
import { InProcessJobQueue } from '../jobs/in-process-job-queue.js';
import { JobHandlers } from '../jobs/job-handlers.js';
import { QueueName } from '../jobs/job-names.js';
import { JOB_QUEUE, type JobQueue } from '../jobs/job-queue.js';

const QUEUES = Object.values(QueueName);

/**
 * Cluster mode: @nestjs/bullmq over REDIS_URL (a server or Sentinels: the
 * connections follow a failover; `maxRetriesPerRequest: null` so a worker
 * waits through it), keys under the database's prefix so clusters sharing a
 * Redis stay apart.
 */
function clusterJobs(redisUrl: string): { imports: DynamicModule[]; providers: Provider[] } {
  return {
    imports: [
      BullModule.forRootAsync({
        useFactory: (conn: DatabaseConnection) => ({ connection: { ...redisOptionsFromUrl(redisUrl), maxRetriesPerRequest: null } as ConnectionOptions, prefix: `${redisKeyPrefix(conn.url)}:bull` }),
        inject: [DatabaseConnection],
      }),
      ...QUEUES.map((name) => BullModule.registerQueue({ name })),
    ],
    providers: [
      HistoryQueueWorker,
      {
        provide: JOB_QUEUE,
        useFactory: (logger: Logger, ...queues: Queue[]) => new BullJobQueue(Object.fromEntries(QUEUES.map((n, i) => [n, queues[i]])) as Record<QueueName, Queue>, logger),
        inject: [LOGGER, ...QUEUES.map((n) => getQueueToken(n))],
      },
    ],
  };
}

/**
 * Single node: the same jobs on in-process timers. Among the worker
 * processes of one host (PLINTH_WORKERS > 1) the scheduled ones run on
 * one: the queue's `election`, which ControllersModule registers with the
 * controllers.
 */
function singleNodeJobs(config: AppConfig): { imports: DynamicModule[]; providers: Provider[] } {
  const elected = config.worker !== undefined;
  return {
    imports: [],
    providers: [{ provide: JOB_QUEUE, useFactory: (handlers: JobHandlers, logger: Logger) => new InProcessJobQueue(handlers, logger, { elected }), inject: [JobHandlers, LOGGER] }],
  };
}

/**
 * Background jobs (global): {@link JOB_QUEUE} to schedule and submit them,
 * BullMQ in cluster mode and in-process in single-node mode, with the same
 * job interface; names, queues and payloads in job-names.ts; each job's one
 * handler found by `@OnJob` and checked at start-up.
 */
@Global()
@Module({})
export class JobsModule implements BeforeApplicationShutdown {
  constructor(
    @Inject(JOB_QUEUE) private readonly queue: JobQueue,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  /** The jobs of `config`'s mode. */
  static forRoot(config: AppConfig): DynamicModule {
    const mode = config.redisUrl ? clusterJobs(config.redisUrl) : singleNodeJobs(config);
    return {
      module: JobsModule,
      imports: [DiscoveryModule, ...mode.imports],
      providers: [JobHandlers, ...mode.providers],
      exports: [JOB_QUEUE],
    };
  }

  /** Stops scheduling before the modules whose work the jobs do stop. */
  async beforeApplicationShutdown(): Promise<void> {
    await this.queue.close();
    this.logger.debug({}, 'jobs stopped');
  }
}
