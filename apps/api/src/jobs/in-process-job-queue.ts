import type { Logger } from 'pino';
import type { JobHandlers } from './job-handlers.js';
import type { JobName, JobPayloads } from './job-names.js';
import { type JobQueue, SCHEDULED_JOBS_ELECTION } from './job-queue.js';

/** Options of {@link InProcessJobQueue}. */
export interface InProcessJobQueueOptions {
  /**
   * Scheduled jobs (`every`) run only between {@link InProcessJobQueue.lead}
   * and {@link InProcessJobQueue.unlead}: one of several worker processes
   * on one database is elected to run them. Unset: they always run here.
   */
  elected?: boolean;
}

/**
 * Single-node jobs: runs in this process, one run of a job at a time; a
 * failed run is logged and the next tick tries again. A scheduled tick that
 * finds its job still running is dropped (the run in progress does its
 * work); a job added while one of its name runs is queued behind it, as a
 * queue would, since its payload (another tenant) may be work the running
 * one never sees. With `elected`, scheduled jobs run only while this
 * process leads (one schedule however many workers ask, as BullMQ's).
 */
export class InProcessJobQueue implements JobQueue {
  private readonly timers = new Set<NodeJS.Timeout>();
  /** The last run queued of each job: the one a new run waits for. */
  private readonly running = new Map<JobName, Promise<unknown>>();
  /** Each scheduled job's payload, run at once when this process starts leading. */
  private readonly schedules = new Map<JobName, JobPayloads[JobName]>();
  private closed = false;
  private leading: boolean;
  /** With `elected`: the controller whose leader runs the scheduled jobs. */
  readonly election?: { readonly name: string; start(): Promise<void>; stop(): Promise<void> };

  constructor(
    private readonly handlers: JobHandlers,
    private readonly logger: Logger,
    opts: InProcessJobQueueOptions = {},
  ) {
    this.leading = !opts.elected;
    if (opts.elected) this.election = { name: SCHEDULED_JOBS_ELECTION, start: () => this.lead(), stop: () => this.unlead() };
  }

  async every<N extends JobName>(name: N, everyMs: number, payload: JobPayloads[N]): Promise<void> {
    this.schedules.set(name, payload);
    const timer = setInterval(() => {
      if (this.leading && !this.running.has(name)) void this.add(name, payload);
    }, everyMs);
    timer.unref();
    this.timers.add(timer);
    if (this.leading) await this.add(name, payload);
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

  /** This process now runs the scheduled jobs: each runs once at once, then on its schedule. Mutates; idempotent. */
  async lead(): Promise<void> {
    if (this.leading) return;
    this.leading = true;
    for (const [name, payload] of this.schedules) if (!this.running.has(name)) await this.add(name, payload);
  }

  /** This process stops running the scheduled jobs; resolves once the runs in progress ended. Mutates; idempotent. */
  async unlead(): Promise<void> {
    this.leading = false;
    await Promise.all([...this.schedules.keys()].map((name) => this.running.get(name)));
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const t of this.timers) clearInterval(t);
    this.timers.clear();
    await Promise.all(this.running.values());
  }
}
