import { type Kysely, sql } from 'kysely';
import type { ChangesTable, DB } from './db.js';
import { type ObjectKey, withResourceVersion } from './object-key.js';
import { DURABLE, flushWal } from './object-store.repository.js';
import { StorageError } from './storage-error.js';

/** One committed change, as watchers receive it. */
export interface ChangeEvent {
  revision: number;
  key: ObjectKey;
  type: 'ADDED' | 'MODIFIED' | 'DELETED';
  /** The new state (for DELETED, the last state), stamped with `revision`. */
  object: Record<string, unknown>;
  /** The state before the change, stamped with its own revision; null for ADDED. */
  prevObject: Record<string, unknown> | null;
}

const TYPES = { A: 'ADDED', M: 'MODIFIED', D: 'DELETED' } as const;

/**
 * Reads the append-only change log in revision order, and compacts it.
 * Revisions are contiguous (see the initial migration), so a reader that
 * asks for the changes after R gets R+1, R+2, … with no holes.
 */
/** The part of the change log one watch reads: a tenant's resource, optionally one namespace or one object. */
export interface ChangeScope {
  tenant: string;
  /** The storage resource. */
  resource: string;
  namespace?: string;
  name?: string;
}

export class ChangeLogRepository {
  constructor(private readonly db: Kysely<DB>) {}

  /**
   * Up to `limit` changes with revision > `after`, oldest first, all of them
   * durable (the barrier runs when the read could see unflushed commits). Throws
   * StorageError Expired when changes after `after` have been compacted away.
   */
  async changesAfter(after: number, limit: number): Promise<ChangeEvent[]> {
    const { rows } = await sql<ChangeRow & { compacted: number; revision: number | null; durable: boolean }>`
      SELECT cs.compacted_revision AS compacted, ${DURABLE} AS durable, c.*
      FROM compaction_state cs
      LEFT JOIN LATERAL (
        SELECT revision, tenant, resource, namespace, name, type, object, prev_object, prev_revision
        FROM changes WHERE revision > ${after} ORDER BY revision LIMIT ${limit}
      ) c ON TRUE
    `.execute(this.db);
    const { compacted, durable } = rows[0];
    // Followers must never see a change that a crash could still undo.
    if (!durable) await flushWal(this.db);
    if (after < compacted) {
      throw new StorageError('Expired', `too old resource version: ${after} (${compacted})`, undefined, compacted);
    }
    return rows.filter((r): r is typeof r & { revision: number } => r.revision !== null).map(toEvent);
  }

  /**
   * Up to `limit` changes of one tenant's resource (optionally one
   * namespace, one name) with revision > `after`, oldest first, read as an
   * index range; and `scannedTo`: every change of that scope up to it is in
   * `events` (the newest committed revision when the batch is not full,
   * since revisions commit in order). Durable, and Expired as
   * {@link changesAfter}.
   */
  async changesInScope(after: number, limit: number, scope: ChangeScope): Promise<{ events: ChangeEvent[]; scannedTo: number }> {
    const ns = scope.namespace !== undefined ? sql`AND namespace = ${scope.namespace}` : sql``;
    const name = scope.name !== undefined ? sql`AND name = ${scope.name}` : sql``;
    const { rows } = await sql<ChangeRow & { compacted: number; current: number; revision: number | null; durable: boolean }>`
      SELECT cs.compacted_revision AS compacted, rc.value AS current, ${DURABLE} AS durable, c.*
      FROM compaction_state cs CROSS JOIN revision_counter rc
      LEFT JOIN LATERAL (
        SELECT revision, tenant, resource, namespace, name, type, object, prev_object, prev_revision
        FROM changes WHERE tenant = ${scope.tenant} AND resource = ${scope.resource} ${ns} ${name} AND revision > ${after}
        ORDER BY revision LIMIT ${limit}
      ) c ON TRUE
    `.execute(this.db);
    const { compacted, current, durable } = rows[0];
    if (!durable) await flushWal(this.db);
    if (after < compacted) {
      throw new StorageError('Expired', `too old resource version: ${after} (${compacted})`, undefined, compacted);
    }
    const events = rows.filter((r): r is typeof r & { revision: number } => r.revision !== null).map(toEvent);
    const scannedTo = events.length === limit ? events[events.length - 1].revision : Math.max(after, Number(current));
    return { events, scannedTo };
  }

  /** The oldest revision a watch or list may start from. */
  async compactedRevision(): Promise<number> {
    const row = await this.db.selectFrom('compaction_state').select('compacted_revision').executeTakeFirstOrThrow();
    return row.compacted_revision;
  }

  /**
   * Deletes up to `batch` changes older than `olderThan`, in one transaction
   * that also raises the compacted revision. Returns how many it deleted (0
   * when nothing is due). Safe to run concurrently and to retry.
   */
  async compact(olderThan: Date, batch: number): Promise<number> {
    return this.db.transaction().execute(async (tx) => {
      const { rows } = await sql<{ n: number; top: number | null }>`
        WITH doomed AS (
          SELECT revision FROM changes WHERE created_at < ${olderThan} ORDER BY revision LIMIT ${batch}
        ), gone AS (
          DELETE FROM changes c USING doomed d WHERE c.revision = d.revision
          AND c.revision < (SELECT value FROM revision_counter)
          RETURNING c.revision
        )
        SELECT count(*)::int AS n, max(revision) AS top FROM gone
      `.execute(tx);
      const { n, top } = rows[0];
      if (top !== null) {
        await sql`UPDATE compaction_state SET compacted_revision = greatest(compacted_revision, ${top}::bigint) WHERE id = 1`.execute(tx);
      }
      return n;
    });
  }

  /** Age in seconds of the oldest change still kept, or 0 when the log is empty. */
  async oldestChangeAgeSeconds(): Promise<number> {
    const { rows } = await sql<{ age: number | null }>`
      SELECT extract(epoch FROM now() - min(created_at))::float8 AS age FROM changes
    `.execute(this.db);
    return rows[0].age ?? 0;
  }
}

/** A `changes` row as read for followers. */
type ChangeRow = Omit<ChangesTable, 'created_at'>;

function toEvent(r: ChangeRow): ChangeEvent {
  return {
    revision: r.revision,
    key: { tenant: r.tenant, resource: r.resource, namespace: r.namespace, name: r.name },
    type: TYPES[r.type],
    object: withResourceVersion(r.object, r.revision),
    prevObject: r.prev_object && r.prev_revision !== null ? withResourceVersion(r.prev_object, r.prev_revision) : null,
  };
}
