import { Queue, Worker } from 'bullmq';
import type { CompactionService } from './compaction.service.js';
import type { CompactionScheduler } from './compaction-timer.js';
import type { PipelineLogger } from './pipeline-logger.js';

/** Options of {@link CompactionQueue}. */
export interface CompactionQueueOptions {
  redisUrl: string;
  /** BullMQ key prefix; one per database, so clusters sharing a Redis stay apart. */
  prefix: string;
  intervalMs: number;
  logger: PipelineLogger;
}

const QUEUE = 'plinth-compaction';
const SCHEDULER_ID = 'watch-history-compaction';

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T | undefined> {
  return Promise.race([p, new Promise<undefined>((r) => setTimeout(() => r(undefined), ms).unref())]);
}

/**
 * Cluster-mode compaction: a BullMQ repeatable job (a job scheduler upserted
 * by every replica, so there is one schedule however many start) and a
 * worker with concurrency 1 on every replica, so each run happens on exactly
 * one of them. Redis being down only delays runs.
 */
export class CompactionQueue implements CompactionScheduler {
  private queue: Queue | undefined;
  private worker: Worker | undefined;

  constructor(
    private readonly service: CompactionService,
    private readonly opts: CompactionQueueOptions,
  ) {}

  /** Creates the schedule and the worker; does not wait for Redis. */
  async start(): Promise<void> {
    const connection = { url: this.opts.redisUrl, maxRetriesPerRequest: null };
    const log = (what: string) => (err: Error) => this.opts.logger.warn({ err: err.message }, `watch compaction ${what} error`);
    this.queue = new Queue(QUEUE, { connection, prefix: this.opts.prefix });
    this.queue.on('error', log('queue'));
    this.queue
      .upsertJobScheduler(SCHEDULER_ID, { every: this.opts.intervalMs }, { name: 'compact', opts: { removeOnComplete: 10, removeOnFail: 10 } })
      .catch(log('schedule'));
    this.worker = new Worker(QUEUE, async () => ({ deleted: await this.service.runOnce() }), {
      connection,
      prefix: this.opts.prefix,
      concurrency: 1,
    });
    this.worker.on('error', log('worker'));
    this.worker.on('failed', (_job, err) => log('job')(err));
  }

  /**
   * Closes the worker (waiting briefly for a running job) and the queue.
   * When Redis is down a graceful close can wait forever, so after the
   * grace period their connections are dropped outright.
   */
  async stop(): Promise<void> {
    const worker = this.worker;
    const queue = this.queue;
    this.worker = undefined;
    this.queue = undefined;
    const closed = await withTimeout(Promise.all([worker?.close(), queue?.close()]).then(() => true), 5000);
    if (!closed) {
      await withTimeout(Promise.all([worker?.disconnect(), queue?.disconnect()]), 2000);
    }
  }
}
