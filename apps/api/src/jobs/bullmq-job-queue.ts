import { OnWorkerEvent, Processor, WorkerHost } from '@nestjs/bullmq';
import { Inject } from '@nestjs/common';
import type { Job, Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { waitForReplica } from '@plinth/storage';
import { LOGGER } from '../observability/logger.js';
import { JobHandlers } from './job-handlers.js';
import { JOB_QUEUES, type JobName, type JobPayloads, QueueName } from './job-names.js';
import type { JobQueue } from './job-queue.js';

/**
 * Cluster-mode jobs on BullMQ: a repeatable job is a job scheduler upserted
 * by every replica (one schedule however many start), and upserted again
 * whenever a queue's connection comes back (a Redis failover may have lost
 * the scheduler or its next run); a submitted job is acknowledged once a
 * Redis replica has it (WAIT), so a failover does not lose it. Redis being
 * down only delays runs, and never blocks start-up or shutdown for long.
 */
export class BullJobQueue implements JobQueue {
  private readonly schedules = new Map<JobName, () => void>();

  constructor(
    private readonly queues: Record<QueueName, Queue>,
    private readonly logger: Logger,
  ) {
    for (const [name, q] of Object.entries(queues)) {
      q.on('error', (err) => logger.warn({ queue: name, err: err.message }, 'job queue error'));
      // Every (re)connection after the first: put the schedules back (an upsert of an existing one changes nothing).
      void ioredisOf(q)
        .then((client) => {
          let connected = client.status === 'ready';
          client.on('ready', () => {
            if (connected) for (const upsert of this.schedules.values()) upsert();
            connected = true;
          });
        })
        .catch(() => undefined);
    }
  }

  async every<N extends JobName>(name: N, everyMs: number, payload: JobPayloads[N]): Promise<void> {
    const upsert = () =>
      void this.queues[JOB_QUEUES[name]]
        .upsertJobScheduler(name, { every: everyMs }, { name, data: payload, opts: { removeOnComplete: 10, removeOnFail: 10 } })
        .catch((err: Error) => this.logger.warn({ job: name, err: err.message }, 'job schedule error'));
    this.schedules.set(name, upsert);
    upsert();
  }

  async add<N extends JobName>(name: N, payload: JobPayloads[N]): Promise<void> {
    const queue = this.queues[JOB_QUEUES[name]];
    await queue.add(name, payload, { removeOnComplete: 10, removeOnFail: 10 });
    await waitForReplica(await ioredisOf(queue), 2000);
  }

  /** Queues are closed by @nestjs/bullmq; nothing of ours to release. */
  async close(): Promise<void> {}
}

/** The ioredis client under `queue` (BullMQ's adapter forwards to it; cluster mode always gives BullMQ ioredis options). */
async function ioredisOf(queue: Queue): Promise<Redis> {
  return (await queue.getBackend().client) as unknown as Redis;
}

/**
 * The worker of the history queue on every replica (concurrency 1, so a
 * run happens on one replica at a time): hands each job to its handler.
 */
@Processor(QueueName.History, { concurrency: 1 })
export class HistoryQueueWorker extends WorkerHost {
  constructor(
    @Inject(JobHandlers) private readonly handlers: JobHandlers,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {
    super();
  }

  async process(job: Job): Promise<unknown> {
    return this.handlers.run(job.name as JobName, job.data);
  }

  /** A connection error while Redis is away (or fails over): logged once per error as JSON, not printed raw by BullMQ. */
  @OnWorkerEvent('error')
  onError(err: Error): void {
    this.logger.warn({ queue: QueueName.History, err: err.message }, 'job worker error');
  }
}
