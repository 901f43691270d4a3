import type { Logger } from 'pino';
import type { JobHandlers } from './job-handlers.js';
import type { JobName, JobPayloads } from './job-names.js';
import type { JobQueue } from './job-queue.js';

/**
 * Single-node jobs: runs in this process, one run of a job at a time; a
 * failed run is logged and the next tick tries again. A scheduled tick that
 * finds its job still running is dropped (the run in progress does its
 * work); a job added while one of its name runs is queued behind it, as a
 * queue would, since its payload (another tenant) may be work the running
 * one never sees.
 */
export class InProcessJobQueue implements JobQueue {
  private readonly timers = new Set<NodeJS.Timeout>();
  /** The last run queued of each job: the one a new run waits for. */
  private readonly running = new Map<JobName, Promise<unknown>>();
  private closed = false;

  constructor(
    private readonly handlers: JobHandlers,
    private readonly logger: Logger,
  ) {}

  async every<N extends JobName>(name: N, everyMs: number, payload: JobPayloads[N]): Promise<void> {
    const timer = setInterval(() => {
      if (!this.running.has(name)) void this.add(name, payload);
    }, everyMs);
    timer.unref();
    this.timers.add(timer);
    await this.add(name, payload);
  }

  async add<N extends JobName>(name: N, payload: JobPayloads[N]): Promise<void> {
    if (this.closed) return;
    const run: Promise<unknown> = (this.running.get(name) ?? Promise.resolve())
      .then(() => (this.closed ? undefined : this.handlers.run(name, payload)))
      .catch((err: Error) => this.logger.warn({ job: name, err: err.message }, 'job failed'))
      .finally(() => {
        if (this.running.get(name) === run) this.running.delete(name);
      });
    this.running.set(name, run);
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const t of this.timers) clearInterval(t);
    this.timers.clear();
    await Promise.all(this.running.values());
  }
}
