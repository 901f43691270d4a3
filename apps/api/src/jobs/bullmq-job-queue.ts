import { Processor, WorkerHost } from '@nestjs/bullmq';
import { Inject } from '@nestjs/common';
import type { Job, Queue } from 'bullmq';
import type { Logger } from 'pino';
import { JobHandlers } from './job-handlers.js';
import { JOB_QUEUES, type JobName, type JobPayloads, QueueName } from './job-names.js';
import type { JobQueue } from './job-queue.js';

/**
 * Cluster-mode jobs on BullMQ: a repeatable job is a job scheduler upserted
 * by every replica (one schedule however many start); Redis being down only
 * delays runs, and never blocks start-up or shutdown for long.
 */
export class BullJobQueue implements JobQueue {
  constructor(
    private readonly queues: Record<QueueName, Queue>,
    private readonly logger: Logger,
  ) {
    for (const [name, q] of Object.entries(queues)) q.on('error', (err) => logger.warn({ queue: name, err: err.message }, 'job queue error'));
  }

  async every<N extends JobName>(name: N, everyMs: number, payload: JobPayloads[N]): Promise<void> {
    this.queues[JOB_QUEUES[name]]
      .upsertJobScheduler(name, { every: everyMs }, { name, data: payload, opts: { removeOnComplete: 10, removeOnFail: 10 } })
      .catch((err: Error) => this.logger.warn({ job: name, err: err.message }, 'job schedule error'));
  }

  async add<N extends JobName>(name: N, payload: JobPayloads[N]): Promise<void> {
    await this.queues[JOB_QUEUES[name]].add(name, payload, { removeOnComplete: 10, removeOnFail: 10 });
  }

  /** Queues are closed by @nestjs/bullmq; nothing of ours to release. */
  async close(): Promise<void> {}
}

/**
 * The worker of the history queue on every replica (concurrency 1, so a
 * run happens on one replica at a time): hands each job to its handler.
 */
@Processor(QueueName.History, { concurrency: 1 })
export class HistoryQueueWorker extends WorkerHost {
  constructor(
    @Inject(JobHandlers) private readonly handlers: JobHandlers,
  ) {
    super();
  }

  async process(job: Job): Promise<unknown> {
    return this.handlers.run(job.name as JobName, job.data);
  }
}
