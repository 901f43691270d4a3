import type { Logger } from 'pino';
import type { JobHandlers } from './job-handlers.js';
import type { JobName, JobPayloads } from './job-names.js';
import type { JobQueue } from './job-queue.js';

/**
 * Single-node jobs: runs in this process, one run of a job at a time; a
 * failed run is logged and the next tick tries again.
 */
export class InProcessJobQueue implements JobQueue {
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly running = new Map<JobName, Promise<unknown>>();
  private closed = false;

  constructor(
    private readonly handlers: JobHandlers,
    private readonly logger: Logger,
  ) {}

  async every<N extends JobName>(name: N, everyMs: number, payload: JobPayloads[N]): Promise<void> {
    const timer = setInterval(() => void this.add(name, payload), everyMs);
    timer.unref();
    this.timers.add(timer);
    await this.add(name, payload);
  }

  async add<N extends JobName>(name: N, payload: JobPayloads[N]): Promise<void> {
    if (this.closed || this.running.has(name)) return;
    const run = Promise.resolve()
      .then(() => this.handlers.run(name, payload))
      .catch((err: Error) => this.logger.warn({ job: name, err: err.message }, 'job failed'))
      .finally(() => this.running.delete(name));
    this.running.set(name, run);
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const t of this.timers) clearInterval(t);
    this.timers.clear();
    await Promise.all(this.running.values());
  }
}
