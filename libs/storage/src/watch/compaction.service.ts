import { type Kysely, sql } from 'kysely';
import type { ChangeLogRepository } from '../change-log.repository.js';
import type { DB } from '../db.js';
import type { PipelineLogger } from './pipeline-logger.js';

/** Options of {@link CompactionService}. */
export interface CompactionOptions {
  db: Kysely<DB>;
  changes: ChangeLogRepository;
  /** Changes older than this are deleted (watches from before them get 410 Expired). */
  retentionSeconds: number;
  logger: PipelineLogger;
  batchSize?: number;
}

/** What the last compaction run did. */
export interface CompactionStats {
  /** Changes deleted by all runs of this process. */
  deletedTotal: number;
  /** How far behind the retention the oldest change still due is (0 when compaction keeps up). */
  lagSeconds: number;
  /** The compacted revision after the last run. */
  compactedRevision: number;
  lastRunAt?: Date;
}

/**
 * Enforces the history retention: deletes changes older than the retention
 * in batches (each batch its own short transaction, so writers and readers
 * are never blocked for long), and measures the lag. Safe to run from
 * several processes at once; the schedulers make sure it normally runs on
 * one.
 */
export class CompactionService {
  readonly stats: CompactionStats = { deletedTotal: 0, lagSeconds: 0, compactedRevision: 0 };
  private running: Promise<number> | undefined;

  constructor(private readonly opts: CompactionOptions) {}

  /** Runs one compaction pass (joining one in progress), returning how many changes it deleted. */
  runOnce(now: Date = new Date()): Promise<number> {
    this.running ??= this.run(now).finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  private async run(now: Date): Promise<number> {
    const { changes, retentionSeconds } = this.opts;
    const batch = this.opts.batchSize ?? 1000;
    const olderThan = new Date(now.getTime() - retentionSeconds * 1000);
    let deleted = 0;
    // Skip the delete (which scans for due rows) when even the oldest change is recent.
    if ((await this.oldestDueAgeSeconds(now)) > retentionSeconds) {
      for (;;) {
        const n = await changes.compact(olderThan, batch);
        deleted += n;
        if (n < batch) break;
        await new Promise((r) => setImmediate(r));
      }
    }
    this.stats.deletedTotal += deleted;
    this.stats.lagSeconds = Math.max(0, (await this.oldestDueAgeSeconds(now)) - retentionSeconds);
    this.stats.compactedRevision = await changes.compactedRevision();
    this.stats.lastRunAt = now;
    if (deleted > 0) this.opts.logger.info({ deleted, compactedRevision: this.stats.compactedRevision }, 'watch history compacted');
    return deleted;
  }

  /**
   * Age in seconds, at `now`, of the oldest change compaction may delete (the
   * newest change is always kept, so it never counts), or 0. Reads by
   * revision, so it is an index lookup, not a scan.
   */
  private async oldestDueAgeSeconds(now: Date): Promise<number> {
    const { rows } = await sql<{ age: number | null }>`
      SELECT extract(epoch FROM ${now}::timestamptz - c.created_at)::float8 AS age
      FROM changes c
      WHERE c.revision < (SELECT value FROM revision_counter WHERE id = 1)
      ORDER BY c.revision
      LIMIT 1
    `.execute(this.opts.db);
    return rows[0]?.age ?? 0;
  }
}
