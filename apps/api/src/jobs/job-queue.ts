import type { JobName, JobPayloads } from './job-names.js';

/** Injection token of the {@link JobQueue}. */
export const JOB_QUEUE = Symbol('JOB_QUEUE');

/**
 * Where jobs are submitted, the same in both modes: BullMQ on Redis in
 * cluster mode (each run happens on exactly one replica, durable across
 * restarts), in-process timers on a single node.
 */
export interface JobQueue {
  /** Runs `name` every `everyMs` (first run at once), one schedule however many replicas ask. */
  every<N extends JobName>(name: N, everyMs: number, payload: JobPayloads[N]): Promise<void>;
  /** Runs `name` once, as soon as a worker is free. */
  add<N extends JobName>(name: N, payload: JobPayloads[N]): Promise<void>;
  /** Stops scheduling and waits (bounded) for runs in progress. */
  close(): Promise<void>;
  /**
   * Set when this process's scheduled jobs must run on one of several
   * processes (the in-process queue of a worker of PLINTH_WORKERS > 1): a
   * controller to elect, started when this process leads and stopped when
   * it no longer does.
   */
  readonly election?: { readonly name: string; start(): Promise<void>; stop(): Promise<void> };
}

/** The election's name of the scheduled jobs of {@link JobQueue.election}. */
export const SCHEDULED_JOBS_ELECTION = 'scheduled-jobs';
