/**
 * Every background job of Plinth in one place: its queue, its name and its
 * payload type. A job named here must have exactly one handler
 * (`@OnJob(name)` on a provider method), or start-up fails.
 */

/** The queues (one BullMQ queue each in cluster mode). */
export enum QueueName {
  /** Maintenance of the change log (history compaction). */
  History = 'plinth-history',
}

/** The jobs, by name. */
export enum JobName {
  /** Deletes change-log entries older than the retention (PLINTH_HISTORY_RETENTION_SECONDS). */
  CompactHistory = 'history.compact',
  /** Rewrites a tenant's custom resources stored in an old version into their CRD's storage version (crd/migration/). */
  MigrateCrdStorage = 'crd.storage-version-migrate',
}

/** The payload of each job. */
export interface JobPayloads {
  [JobName.CompactHistory]: Record<string, never>;
  [JobName.MigrateCrdStorage]: { tenant: string };
}

/** The queue each job runs on. */
export const JOB_QUEUES: Record<JobName, QueueName> = {
  [JobName.CompactHistory]: QueueName.History,
  // Maintenance too, on the same queue and worker (one run at a time per replica).
  [JobName.MigrateCrdStorage]: QueueName.History,
};
