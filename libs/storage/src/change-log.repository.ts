import { type Kysely, sql } from 'kysely';
import type { ChangesTable, DB } from './db.js';
import { preparedSql } from './prepared-statements.js';
import { type ObjectKey, withResourceVersion } from './object-key.js';
import { DURABLE, ensureDurableUpTo, flushWal } from './object-store.repository.js';
import type { ChangeScope } from './change-scope-sql.js';
import { labelContainment, labelIndexCovers } from './change-label-sql.js';
import type { LabelRequirementLike } from './selector-sql.js';
import { type DatabaseSource, routerOf, type ShardRouter, tenantDb } from './shard-router.js';
import { StorageError } from './storage-error.js';
import { isEncryptedBody, openBody, prepareBodies } from './value/stored-body.js';
import { CorruptObjectError } from './value/corrupt-object.js';

/** One committed change, as watchers receive it. */
export interface ChangeEvent {
  revision: number;
  key: ObjectKey;
  type: 'ADDED' | 'MODIFIED' | 'DELETED';
  /** The new state (for DELETED, the last state), stamped with `revision`. */
  object: Record<string, unknown>;
  /** The state before the change, stamped with its own revision; null for ADDED. */
  prevObject: Record<string, unknown> | null;
  /**
   * Set (upstream's storage error message) when the change's object could
   * not be decrypted: `object` and `prevObject` are then the stored
   * (encrypted) bodies, whose readable metadata is all there is to see.
   */
  unreadable?: string;
  /** With `unreadable`: the transformer's own message (upstream's `data from the storage is not transformable` detail). */
  unreadableDetail?: string;
}

/**
 * The change with its object and previous object decrypted (the stored
 * form as the change log and the Redis stream carry it, see
 * ChangeLogRepository.changesAfter), or, when either cannot be decrypted,
 * the change as it is with {@link ChangeEvent.unreadable} set. Never
 * throws; returns `change` itself when nothing is encrypted.
 */
export function openChange(change: ChangeEvent): ChangeEvent {
  if (change.unreadable !== undefined) return change;
  try {
    const object = openBody(change.key, change.object, { cached: true });
    const prevObject = change.prevObject && openBody(change.key, change.prevObject);
    return object === change.object && prevObject === change.prevObject ? change : { ...change, object, prevObject };
  } catch (err) {
    const detail = err instanceof CorruptObjectError ? { unreadableDetail: err.detail } : {};
    return { ...change, unreadable: (err as Error).message, ...detail };
  }
}

/**
 * Fetches ahead the data keys that opening `changes` needs (KMS v2 on a
 * cache miss): undefined when every one is in memory. Never rejects (a key
 * that cannot be had marks its change unreadable in openChange).
 */
export function prepareChanges(changes: ChangeEvent[]): Promise<void> | undefined {
  return prepareBodies(changes.flatMap((c) => (c.unreadable !== undefined ? [] : [{ key: c.key, body: c.object }, { key: c.key, body: c.prevObject }])));
}

/** True when the change carries an encrypted body (the stream's form, not yet opened). */
export function isSealedChange(change: ChangeEvent): boolean {
  return isEncryptedBody(change.object) || (change.prevObject !== null && isEncryptedBody(change.prevObject));
}

export type { ChangeScope };

const TYPES = { A: 'ADDED', M: 'MODIFIED', D: 'DELETED' } as const;

/** The columns of a change row `c` as followers read them, with its new state derived as {@link changeObject} says. */
const CHANGE_COLUMNS = sql`c.revision, c.tenant, c.resource, c.namespace, c.name, c.type, ${changeObject()} AS object, c.prev_object, c.prev_revision`;

/**
 * The new state of the change row `c` (migration 0010 stores no copy of it):
 * its own `object` when written before that migration; for a delete, its
 * `prev_object` (the last state); else the current object row if it is still
 * at the change's revision; else the `prev_object` of the change that
 * replaced it (the one whose `prev_revision` is the change's revision, which
 * compaction, going in revision order, never deletes first). One index
 * lookup, done only for the rows that need it (CASE and coalesce stop at
 * the first answer). NULL only for a row whose object a tenant purge has
 * already removed.
 */
function changeObject() {
  return sql`CASE WHEN c.object IS NOT NULL THEN c.object WHEN c.type = 'D' THEN c.prev_object ELSE coalesce(
    (SELECT o.body FROM objects o
      WHERE o.tenant = c.tenant AND o.resource = c.resource AND o.namespace = c.namespace AND o.name = c.name AND o.revision = c.revision),
    (SELECT n.prev_object FROM changes n
      WHERE plinth_hash(n.tenant, n.resource, n.namespace, n.name) = plinth_hash(c.tenant, c.resource, c.namespace, c.name)
        AND n.revision > c.revision AND n.prev_revision = c.revision
        AND n.tenant = c.tenant AND n.resource = c.resource AND n.namespace = c.namespace AND n.name = c.name
      LIMIT 1)
  ) END`;
}

/**
 * True for a change row that is a copy of a moved tenant's history (below
 * the revision from which its shard holds its changes as they happen,
 * migration 0014): history to resume from, not a new change to publish.
 * One primary-key lookup in the small tenants table per row read.
 */
/**
 * The oldest revision of `tenant`'s history this shard holds (migration
 * 0014's `history_floor`: 0 unless the tenant moved here). Reads and
 * watches below it are Expired for that tenant, whatever the shard's own
 * compaction reached.
 */
export function tenantFloor(tenant: string) {
  return sql<number>`coalesce((SELECT t.history_floor FROM tenants t WHERE t.name = ${tenant}), 0)`;
}

const COPIED = sql<boolean>`c.revision < coalesce((SELECT t.arrived_revision FROM tenants t WHERE t.name = c.tenant), 0)`;

/**
 * Reads the append-only change log in revision order, and compacts it.
 * A shard's own revisions are contiguous (see the initial migration); a
 * tenant moving in raises the counter past the revisions it brings
 * (migration 0014), so readers must not take a hole for a missing change.
 */
export class ChangeLogRepository {
  private readonly router: ShardRouter;

  /**
   * Over one database, or a router: {@link changesInScope} (one tenant) then
   * reads the tenant's shard, and the sweeps of the whole log (changesAfter,
   * compaction) read the first shard: the watch pipeline of each shard builds
   * its own repository over that shard's database.
   */
  constructor(source: DatabaseSource) {
    this.router = routerOf(source);
  }

  /** The database of the whole-log reads: the only one, or the router's first shard. */
  private get db(): Kysely<DB> {
    return this.router.shards()[0].db;
  }

  /**
   * Up to `limit` changes with revision > `after`, oldest first, all of them
   * durable (the barrier runs when the read could see unflushed commits). Throws
   * StorageError Expired when changes after `after` have been compacted away.
   * Objects come as stored (encrypted ones stay encrypted: the relay
   * publishes them so to Redis); readers decrypt with {@link openChange}.
   */
  async changesAfter(after: number, limit: number): Promise<ChangeEvent[]> {
    for (let from = after; ; ) {
      const rows = await this.readAfter(from, limit);
      const events = toEvents(rows);
      // A page of nothing but rows whose state a tenant purge already removed must not read as "nothing after
      // `from`", or a follower would stop there for good: read on past them.
      const last = rows[rows.length - 1]?.revision;
      if (events.length > 0 || last === null || last === undefined) return events;
      from = last;
    }
  }

  /** One page of change rows after `after` as {@link changesAfter} reads them (a single row of NULLs when there are none). */
  private async readAfter(after: number, limit: number) {
    const { rows } = await preparedSql<ChangeRow & { compacted: number; gap: number | null; revision: number | null; durable: boolean }>`
      SELECT cs.compacted_revision AS compacted, plinth_history_gap(${after}::bigint) AS gap, ${DURABLE} AS durable, c.*
      FROM compaction_state cs
      LEFT JOIN LATERAL (
        SELECT ${CHANGE_COLUMNS}
        FROM changes c WHERE c.revision > ${after} AND NOT ${COPIED} ORDER BY c.revision LIMIT ${limit}
      ) c ON TRUE
    `.execute(this.db);
    const { compacted, durable, gap } = rows[0];
    // Followers must never see a change that a crash could still undo.
    const last = rows[rows.length - 1].revision;
    if (!durable) await (last === null ? flushWal(this.db) : ensureDurableUpTo(this.db, this.db, last));
    // A revision lost in a failover (migration 0022) is as gone as a compacted one.
    if (after < compacted || gap !== null) {
      throw new StorageError('Expired', `too old resource version: ${after} (${gap ?? compacted})`, undefined, gap ?? compacted);
    }
    return rows;
  }

  /**
   * Up to `limit` changes of one tenant's resource (optionally one
   * namespace, one name) with revision > `after`, oldest first, read as an
   * index range; and `scannedTo`: every change of that scope up to it is in
   * `events` (the newest committed revision when the batch is not full,
   * since revisions commit in order). Durable, and Expired as
   * {@link changesAfter}. Reads through migration 0012's function, which
   * keeps each batch an index range in revision order. Objects come
   * decrypted ({@link openChange}: one that cannot be is marked unreadable).
   *
   * With `labels` (requirements of the watch's label selector), changes
   * neither of whose states has the requirements' equality labels may be
   * left out (migration 0018's label index finds the rest); `events` then
   * holds every change of the scope up to `scannedTo` that may match, and
   * the caller filters them with its whole selector as before. `indexed`
   * says whether the index was used (it is not for selectors without
   * equality terms, nor for history older than the index).
   */
  async changesInScope(after: number, limit: number, scope: ChangeScope, labels?: LabelRequirementLike[]): Promise<{ events: ChangeEvent[]; scannedTo: number; indexed: boolean }> {
    const db = await tenantDb(this.router, scope.tenant);
    const contains = labels && labelContainment(scope.tenant, scope.resource, labels);
    const args = sql`${scope.tenant}::text, ${scope.resource}::text, ${scope.namespace ?? null}::text, ${scope.name ?? null}::text, ${after}::bigint, ${limit}::integer`;
    const read = contains
      ? sql`SELECT * FROM plinth_changes_with_labels(${args}, ${JSON.stringify([contains])}::jsonb) WHERE ${labelIndexCovers(scope.tenant, after)}
          UNION ALL SELECT * FROM plinth_changes_in_scope(${args}) WHERE NOT ${labelIndexCovers(scope.tenant, after)}`
      : sql`SELECT * FROM plinth_changes_in_scope(${args})`;
    const indexedColumn = contains ? labelIndexCovers(scope.tenant, after) : sql<boolean>`false`;
    const { rows } = await sql<ChangeRow & { compacted: number; gap: number | null; current: number; revision: number | null; durable: boolean; indexed: boolean }>`
      SELECT greatest(cs.compacted_revision, ${tenantFloor(scope.tenant)}) AS compacted, plinth_history_gap(${after}::bigint) AS gap, rc.value AS current, ${DURABLE} AS durable, ${indexedColumn} AS indexed, c.*
      FROM compaction_state cs CROSS JOIN revision_counter rc
      LEFT JOIN LATERAL (
        SELECT ${CHANGE_COLUMNS}
        FROM (${read}) c
        ORDER BY c.revision
      ) c ON TRUE
    `.execute(db);
    const { compacted, gap, current, durable, indexed } = rows[0];
    if (!durable) await flushWal(db);
    if (after < compacted || gap !== null) {
      throw new StorageError('Expired', `too old resource version: ${after} (${gap ?? compacted})`, undefined, gap ?? compacted);
    }
    const found = rows.filter((r) => r.revision !== null);
    const scannedTo = found.length === limit ? Number(found[found.length - 1].revision) : Math.max(after, Number(current));
    const events = toEvents(rows);
    await prepareChanges(events);
    return { events: events.map(openChange), scannedTo, indexed };
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
          SELECT tenant, revision FROM changes WHERE created_at < ${olderThan} ORDER BY revision LIMIT ${batch}
        ), gone AS (
          DELETE FROM changes c USING doomed d WHERE c.tenant = d.tenant AND c.revision = d.revision
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
type ChangeRow = Omit<ChangesTable, 'created_at' | 'labels'>;

/** The events of the rows read (none when the scope had none: the LEFT JOIN's single row of NULLs), leaving out a purged tenant's rows whose state is gone. */
function toEvents(rows: Array<Omit<ChangeRow, 'revision'> & { revision: number | null }>): ChangeEvent[] {
  return rows.filter((r): r is typeof r & { revision: number; object: Record<string, unknown> } => r.revision !== null && r.object !== null).map(toEvent);
}

function toEvent(r: ChangeRow & { object: Record<string, unknown> }): ChangeEvent {
  return {
    revision: r.revision,
    key: { tenant: r.tenant, resource: r.resource, namespace: r.namespace, name: r.name },
    type: TYPES[r.type],
    object: withResourceVersion(r.object, r.revision),
    prevObject: r.prev_object && r.prev_revision !== null ? withResourceVersion(r.prev_object, r.prev_revision) : null,
  };
}
