import { type Kysely, sql } from 'kysely';
import type { DB } from './db.js';
import type { ObjectKey } from './object-key.js';
import { errorMessage, withDataKeys } from './value/value-transformer.js';
import { isStaleBody, openBody, sealBody } from './value/stored-body.js';

/** Where a rotation stands on one shard (the row of migration 0017). */
export interface RotationState {
  /** The configuration rotated to: the `sha256:` hash of the EncryptionConfiguration file. */
  target: string;
  /** What asked for the pass besides a new configuration (the Shard's annotation value), if anything. */
  requested?: string;
  /** `objects` (current rows), then `changes` (the kept history), then `done`. */
  phase: 'objects' | 'changes' | 'done';
  /** The last object row checked in the `objects` phase; undefined: from the start. */
  objectCursor?: ObjectKey;
  /** The last change row checked in the `changes` phase; undefined: from the start. */
  changeCursor?: { tenant: string; revision: number };
  /** Rows checked, rewritten under the first provider, and left because they could not be read. */
  checked: number;
  rewritten: number;
  failed: number;
  startedAt: Date;
  finishedAt?: Date;
}

/** What one batch of a rotation did. */
export interface RotationBatch {
  /** Rows read (0: the phase has reached its end). */
  checked: number;
  /** Rows found stale and rewritten in place. */
  rewritten: number;
  /** Stale rows changed or removed meanwhile: the write that did it stored them (nothing to do). */
  superseded: number;
  /** Stale rows that could not be read (their key is no longer configured) or written; each is in `failures`. */
  failed: number;
  failures: Array<{ key: ObjectKey; error: string }>;
}

interface StateRow {
  target: string;
  requested: string | null;
  phase: RotationState['phase'];
  cursor_tenant: string | null;
  cursor_resource: string | null;
  cursor_namespace: string | null;
  cursor_name: string | null;
  cursor_revision: number | null;
  checked: number;
  rewritten: number;
  failed: number;
  started_at: Date;
  finished_at: Date | null;
}

/**
 * The stored form `stored` should have now: re-encrypted by its resource's
 * first provider (or decrypted, when that is identity), the plaintext
 * unchanged; undefined when it already is in that form. The one place the
 * rotation calls the transformers. Throws StorageError Internal when it
 * cannot be read (see openBody). Pure apart from the transformers.
 */
export function resealStoredBody(key: ObjectKey, stored: Record<string, unknown>): Record<string, unknown> | undefined {
  if (!isStaleBody(key, stored)) return undefined;
  return sealBody(key, openBody(key, stored));
}

/**
 * Makes the statement's own (implicit) transaction commit without waiting
 * for its WAL flush: a rewrite lost in a crash only leaves its row stale,
 * to be found again, and the cursor saved after the batch
 * ({@link EncryptionRotationRepository.save}, a synchronous commit) flushes
 * the WAL up to itself, every rewrite before it included. So a batch costs
 * one flush instead of one per row, and the cursor never gets durable
 * ahead of the rows it passed.
 */
const NO_FLUSH = sql`set_config('synchronous_commit', 'off', true) AS no_flush`;

/** Rows of a batch rewritten this many at a time (each its own statement and commit: no lock held across rows). */
const WRITES_IN_FLIGHT = 8;

/** Runs `work` over `items`, at most `limit` at once. */
async function eachConcurrently<T>(items: T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < items.length) await work(items[next++]);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
}

function toState(r: StateRow): RotationState {
  const state: RotationState = { target: r.target, phase: r.phase, checked: r.checked, rewritten: r.rewritten, failed: r.failed, startedAt: r.started_at };
  if (r.finished_at) state.finishedAt = r.finished_at;
  if (r.requested !== null) state.requested = r.requested;
  if (r.cursor_tenant !== null && r.phase === 'objects') {
    state.objectCursor = { tenant: r.cursor_tenant, resource: r.cursor_resource ?? '', namespace: r.cursor_namespace ?? '', name: r.cursor_name ?? '' };
  }
  if (r.cursor_tenant !== null && r.phase === 'changes') state.changeCursor = { tenant: r.cursor_tenant, revision: r.cursor_revision ?? 0 };
  return state;
}

/**
 * The storage side of the encryption rotation job: its saved state on a
 * shard, and batches that rewrite stale stored values in place. Every
 * method takes the shard's database: a shard is one database, and the
 * rotation walks each on its own. Re-encryption keeps each row's revision
 * (the plaintext is unchanged, so no new change is recorded and no watcher
 * sees an event), and every rewrite is conditional on what was read, so a
 * concurrent write is never overwritten.
 */
export class EncryptionRotationRepository {
  /** The shard's rotation state, or undefined when no rotation ever began there. Reads only. */
  async state(db: Kysely<DB>): Promise<RotationState | undefined> {
    const { rows } = await sql<StateRow>`SELECT * FROM encryption_rotation WHERE id = 1`.execute(db);
    return rows[0] && toState(rows[0]);
  }

  /** Starts a rotation to `target` from the beginning (for `requested`, if set), replacing any state (one statement). Returns the new state. */
  async begin(db: Kysely<DB>, target: string, requested?: string): Promise<RotationState> {
    const { rows } = await sql<StateRow>`
      INSERT INTO encryption_rotation (id, target, requested, phase) VALUES (1, ${target}, ${requested ?? null}, 'objects')
      ON CONFLICT (id) DO UPDATE SET target = EXCLUDED.target, requested = EXCLUDED.requested, phase = 'objects', cursor_tenant = NULL, cursor_resource = NULL,
        cursor_namespace = NULL, cursor_name = NULL, cursor_revision = NULL, checked = 0, rewritten = 0, failed = 0,
        started_at = now(), updated_at = now(), finished_at = NULL
      RETURNING *`.execute(db);
    return toState(rows[0]);
  }

  /**
   * Saves `state` (phase, cursor, counts) if the shard still rotates to its
   * target; returns false when another rotation replaced it meanwhile.
   * One statement. Sets finished_at when the phase is `done`.
   */
  async save(db: Kysely<DB>, state: RotationState): Promise<boolean> {
    const o = state.phase === 'objects' ? state.objectCursor : undefined;
    const c = state.phase === 'changes' ? state.changeCursor : undefined;
    const result = await sql`
      UPDATE encryption_rotation SET phase = ${state.phase},
        cursor_tenant = ${o?.tenant ?? c?.tenant ?? null}, cursor_resource = ${o?.resource ?? null},
        cursor_namespace = ${o?.namespace ?? null}, cursor_name = ${o?.name ?? null}, cursor_revision = ${c?.revision ?? null},
        checked = ${state.checked}, rewritten = ${state.rewritten}, failed = ${state.failed}, updated_at = now(),
        finished_at = CASE WHEN ${state.phase} = 'done' THEN now() ELSE NULL END
      WHERE id = 1 AND target = ${state.target}`.execute(db);
    return Number(result.numAffectedRows ?? 0) === 1;
  }

  /** The planner's estimate of the rows a rotation reads on this shard (objects and changes), for progress. Never scans. */
  async estimateRows(db: Kysely<DB>): Promise<number> {
    const { rows } = await sql<{ n: number }>`
      SELECT coalesce(sum(greatest(c.reltuples, 0)), 0)::bigint AS n FROM pg_class c
      WHERE c.oid IN (to_regclass('objects'), to_regclass('changes'))`.execute(db);
    return Number(rows[0]?.n ?? 0);
  }

  /**
   * Checks the next `limit` object rows after `after` (key order) and
   * rewrites the stale ones in place, each only if its revision is still
   * the one read (a write meanwhile stored it with the first provider
   * already, or deleted it). Returns what it did and the last key read.
   * Each rewrite is its own autocommit statement, which also corrects the
   * tenant's stored bytes (the ciphertext's size may change with the
   * provider) without checking its limits.
   */
  async rotateObjects(db: Kysely<DB>, after: ObjectKey | undefined, limit: number): Promise<RotationBatch & { last?: ObjectKey }> {
    const cursor = after
      ? sql`WHERE (tenant, resource, namespace, name) > (${after.tenant}, ${after.resource}, ${after.namespace}, ${after.name})`
      : sql``;
    const { rows } = await sql<{ tenant: string; resource: string; namespace: string; name: string; revision: number; body: Record<string, unknown> }>`
      SELECT tenant, resource, namespace, name, revision, body FROM objects ${cursor}
      ORDER BY tenant, resource, namespace, name LIMIT ${limit}`.execute(db);
    const batch: RotationBatch = { checked: rows.length, rewritten: 0, superseded: 0, failed: 0, failures: [] };
    await eachConcurrently(rows, WRITES_IN_FLIGHT, async (r) => {
      const key = { tenant: r.tenant, resource: r.resource, namespace: r.namespace, name: r.name };
      await this.rewrite(batch, key, () => resealStoredBody(key, r.body), (body) => this.rewriteObject(db, key, r.revision, body));
    });
    const l = rows.at(-1);
    return { ...batch, last: l && { tenant: l.tenant, resource: l.resource, namespace: l.namespace, name: l.name } };
  }

  /**
   * Checks the next `limit` change-log rows after `after` ((tenant,
   * revision) order) and re-encrypts their stale `object` and
   * `prev_object` in place, each row only if both still hold what was read
   * (compaction or a tenant purge may have removed it: then nothing is
   * written). The history keeps its meaning; only its ciphertext changes.
   */
  async rotateChanges(db: Kysely<DB>, after: { tenant: string; revision: number } | undefined, limit: number): Promise<RotationBatch & { last?: { tenant: string; revision: number } }> {
    const cursor = after ? sql`WHERE (tenant, revision) > (${after.tenant}, ${after.revision})` : sql``;
    const { rows } = await sql<{ tenant: string; resource: string; namespace: string; name: string; revision: number; object: Record<string, unknown> | null; prev_object: Record<string, unknown> | null }>`
      SELECT tenant, resource, namespace, name, revision, object, prev_object FROM changes ${cursor}
      ORDER BY tenant, revision LIMIT ${limit}`.execute(db);
    const batch: RotationBatch = { checked: rows.length, rewritten: 0, superseded: 0, failed: 0, failures: [] };
    await eachConcurrently(rows, WRITES_IN_FLIGHT, async (r) => {
      const key = { tenant: r.tenant, resource: r.resource, namespace: r.namespace, name: r.name };
      const reseal = () => {
        const object = r.object && resealStoredBody(key, r.object);
        const prev = r.prev_object && resealStoredBody(key, r.prev_object);
        return object || prev ? { object: object ?? r.object, prev: prev ?? r.prev_object } : undefined;
      };
      await this.rewrite(batch, key, reseal, (next) => this.rewriteChange(db, r.tenant, r.revision, { object: r.object, prev: r.prev_object }, next));
    });
    const l = rows.at(-1);
    return { ...batch, last: l && { tenant: l.tenant, revision: l.revision } };
  }

  /** One row of a batch: reseal it (undefined: current already) and write it, counting the outcome in `batch`. */
  private async rewrite<T>(batch: RotationBatch, key: ObjectKey, reseal: () => T | undefined, write: (next: T) => Promise<boolean>): Promise<void> {
    let next: T | undefined;
    try {
      // A KMS v2 data key not in memory yet (a tenant's seed under the current key_id) is fetched, then the reseal runs again.
      next = await withDataKeys(reseal);
      if (next === undefined) return;
      if (await write(next)) batch.rewritten++;
      else batch.superseded++;
    } catch (err) {
      batch.failed++;
      batch.failures.push({ key, error: errorMessage(err) });
    }
  }

  /** Replaces one object's stored body if its revision is still `revision`, and its tenant's stored bytes by the difference. True when written. */
  private async rewriteObject(db: Kysely<DB>, key: ObjectKey, revision: number, body: Record<string, unknown>): Promise<boolean> {
    const { rows } = await sql<{ n: number }>`
      WITH old AS (
        SELECT plinth_body_size(body) AS size FROM objects
        WHERE tenant = ${key.tenant} AND resource = ${key.resource} AND namespace = ${key.namespace} AND name = ${key.name} AND revision = ${revision}
      ), written AS (
        UPDATE objects SET body = ${JSON.stringify(body)}::jsonb
        WHERE tenant = ${key.tenant} AND resource = ${key.resource} AND namespace = ${key.namespace} AND name = ${key.name} AND revision = ${revision}
        RETURNING plinth_body_size(body) AS size
      ), accounted AS (
        UPDATE tenant_usage u SET bytes = u.bytes + d.delta
        FROM (SELECT w.size - o.size AS delta FROM written w, old o) d
        WHERE d.delta <> 0 AND u.tenant = ${key.tenant} AND u.usage_key = ANY (plinth_usage_keys(${key.resource}))
      )
      SELECT ${NO_FLUSH}, (SELECT count(*)::int FROM written) AS n`.execute(db);
    return rows[0].n === 1;
  }

  /** Replaces one change row's bodies if they still are `old`. True when written. */
  private async rewriteChange(
    db: Kysely<DB>,
    tenant: string,
    revision: number,
    old: { object: Record<string, unknown> | null; prev: Record<string, unknown> | null },
    next: { object: Record<string, unknown> | null; prev: Record<string, unknown> | null },
  ): Promise<boolean> {
    const json = (v: Record<string, unknown> | null) => (v === null ? null : JSON.stringify(v));
    const { rows } = await sql<{ n: number }>`
      WITH written AS (
        UPDATE changes SET object = ${json(next.object)}::jsonb, prev_object = ${json(next.prev)}::jsonb
        WHERE tenant = ${tenant} AND revision = ${revision}
          AND object IS NOT DISTINCT FROM ${json(old.object)}::jsonb AND prev_object IS NOT DISTINCT FROM ${json(old.prev)}::jsonb
        RETURNING 1
      )
      SELECT ${NO_FLUSH}, (SELECT count(*)::int FROM written) AS n`.execute(db);
    return rows[0].n === 1;
  }
}
