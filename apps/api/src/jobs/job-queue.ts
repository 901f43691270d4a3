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
}
