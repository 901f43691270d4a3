import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { DB } from './db.js';
import { changeScopeCondition } from './change-scope-sql.js';
import { tenantFloor } from './change-log.repository.js';
import { afterCursor, keyFilters, nameLookup, OBJECT_LABELS, REMAINING_COUNT_CAP, type StateRow } from './list-sql.js';
import { compareByteOrder } from './object-key.js';
import type { ListCursor, ListQuery } from './object-list.repository.js';
import { DURABLE, flushWal } from './object-store.repository.js';
import { type ShardRouter, tenantDb } from './shard-router.js';
import { StorageError } from './storage-error.js';

/**
 * Changes of a list's scope since its revision from which a page at that
 * revision reads the changed keys by name (migration 0013's index) instead of
 * sorting all of them: below it, the sort costs a few milliseconds; above it,
 * the by-name scan reads at most about `limit / threshold` of the scope's
 * kept history per page.
 */
export const BY_NAME_THRESHOLD = 4000;

/**
 * Pages of a list at a past revision R (ObjectListRepository's reads with a
 * resourceVersion): the current rows with revision ≤ R, plus, for each key
 * changed after R, the `prev_object` of its first change after R, read as
 * ordered index ranges bounded to the page (see {@link read}).
 */
export class PastStateReader {
  constructor(
    private readonly router: ShardRouter,
    private readonly byNameThreshold: number = BY_NAME_THRESHOLD,
  ) {}

  /**
   * Reads up to `n` rows of the state at revision `at` after the cursor, in
   * one REPEATABLE READ transaction (every statement sees one snapshot):
   *
   * 1. the watermarks (Expired / TooLargeResourceVersion);
   * 2. the keys changed since `at` that existed at `at`, with their state
   *    there (the `prev_object` of their first later change), the first `n`
   *    after the cursor in key order: see {@link changedSince};
   * 3. the keys unchanged since `at` (`objects` rows at or below it) after
   *    the cursor, and, when step 2 filled its `n`, only up to the last key
   *    it returned: every key changed since `at` in that range is then in
   *    step 2's answer, so this range scan skips at most `n` changed keys
   *    (plus keys created after `at`) instead of every changed key after the
   *    cursor;
   * 4. the two key-ordered lists, which never share a key, merged.
   *
   * Within the range up to step 2's last key both sides are complete, so
   * the first `n` of the merge are the first `n` of the state. When step 2
   * reads by name without selectors, both steps are also limited to the
   * keys up to the `n`-th current object after the cursor (so a by-name
   * scan never runs through the history of the rest of the list); if that
   * range holds fewer than `n` keys of the state (objects created since
   * `at`), the page goes on from its end.
   */
  async read(q: ListQuery, after: ListCursor | undefined, n: number | null, at: number): Promise<{ rows: StateRow[]; revision: number }> {
    let durable = true;
    const db = await tenantDb(this.router, q.tenant);
    const rows = await db
      .transaction()
      .setIsolationLevel('repeatable read')
      .setAccessMode('read only')
      .execute(async (trx) => {
        // A page reads ordered index ranges only: sorting, bitmap and sequential scans are disabled for the statements after
        // this one (the sort of the few changes since `at` is still done when that is the read chosen), so that stale
        // statistics cannot turn a bounded range into a read of every change since `at`. JIT is off with them: before
        // PostgreSQL 18 a node the planner must use although disabled (that sort) adds 1e10 to the plan's estimated
        // cost, past every jit_*_above_cost, and a server built with LLVM (Debian's, most managed ones; not the embedded
        // one) then compiled each such statement, inlined and optimised: 0.4-0.8 s for a statement that runs in 0.5 ms.
        const planned =
          n === null
            ? sql``
            : sql`, set_config('enable_sort', 'off', true), set_config('enable_bitmapscan', 'off', true), set_config('enable_seqscan', 'off', true), set_config('jit', 'off', true)`;
        const { rows: marks } = await sql<{ compacted: number; gap: number | null; current: number; durable: boolean }>`
          SELECT greatest(cs.compacted_revision, ${tenantFloor(q.tenant)}) AS compacted, plinth_history_gap(${at}::bigint) AS gap, rc.value AS current, ${DURABLE} AS durable ${planned} FROM compaction_state cs CROSS JOIN revision_counter rc
        `.execute(trx);
        const { compacted, current, gap } = marks[0];
        durable = marks[0].durable;
        if (at < compacted || gap !== null) throw new StorageError('Expired', `too old resource version: ${at} (${gap ?? compacted})`, current, gap ?? compacted);
        if (at > current) throw new StorageError('TooLargeResourceVersion', `Too large resource version: ${at}, current: ${current}`, current, compacted);
        const selected = (q.labelRequirements?.length ?? 0) > 0 || (q.fieldRequirements?.length ?? 0) > 0;
        // Few revisions since `at` at all: the changes since are few, sort them. Otherwise count the scope's (bounded).
        const probe = n !== null && Number(current) - at >= this.byNameThreshold ? await this.probeScope(trx, q, after, n, at, !selected) : undefined;
        const byName = probe !== undefined && probe.since >= this.byNameThreshold;
        const page: StateRow[] = [];
        for (let from = after, first = true; ; first = false) {
          const want = n === null ? null : n - page.length;
          const upTo = byName && !selected && want !== null ? (first ? probe.nth : await this.nthCurrentKey(trx, q, from, want)) : undefined;
          const changed = await this.changedSince(trx, q, from, upTo, want, at, byName);
          const filled = want !== null && changed.length === want;
          const bound = filled ? changed[want - 1] : upTo;
          // Label selectors need their GIN index, which only a bitmap scan reads.
          if (first && selected && n !== null) await sql`SELECT set_config('enable_bitmapscan', 'on', true), set_config('enable_sort', 'on', true)`.execute(trx);
          const unchanged = await this.unchangedSince(trx, q, from, bound, want, at);
          const merged = mergeByKey(changed, unchanged);
          page.push(...(want === null ? merged : merged.slice(0, want)));
          if (n === null || page.length >= n || filled || !upTo) break;
          from = upTo;
        }
        // remainingItemCount at a past revision costs a count over the state after the cursor: bounded work only while
        // the scope changed little since `at` (left out otherwise; upstream documents it as optional and an estimate).
        const total = q.countRemaining && n !== null && !byName ? await this.stateCount(trx, q, after, n, at) : null;
        return page.map((r) => ({ ...r, total }));
      });
    if (!durable) await flushWal(db);
    return { rows, revision: at };
  }

  /** The key of the `k`-th current object of the list after the cursor (any revision), if there are that many. */
  private async nthCurrentKey(trx: Kysely<DB>, q: ListQuery, after: ListCursor | undefined, k: number): Promise<ListCursor | undefined> {
    const { rows } = await sql<ListCursor>`${this.nthSql(q, after, k)}`.execute(trx);
    return rows[0];
  }

  private nthSql(q: ListQuery, after: ListCursor | undefined, k: number): RawBuilder<unknown> {
    const nsFilter = q.namespace !== undefined ? sql`AND namespace = ${q.namespace}` : sql``;
    const from = after ? sql`AND ${afterCursor(q, after, sql.ref('namespace'), sql.ref('name'))}` : sql``;
    return sql`SELECT namespace, name FROM objects WHERE tenant = ${q.tenant} AND resource = ${q.resource} ${nsFilter} ${from} ORDER BY namespace, name OFFSET ${k - 1} LIMIT 1`;
  }

  /**
   * How many changes the list's scope has after `at`, counted up to the
   * by-name threshold over the scope's revision-ordered index (migration
   * 0010), and, when `nth`, the key of the `n`-th current object after the
   * cursor (see {@link nthCurrentKey}), in one statement. Two row
   * comparisons bound the counted range: with an equality on the hash column
   * instead, PostgreSQL started the scan at the scope's first change and
   * filtered its way to `at`; a plain `revision > at` would let it read every
   * change of every tenant after `at` by primary key. A hash collision only
   * makes the by-name read chosen a little early; it is exact either way.
   */
  private async probeScope(trx: Kysely<DB>, q: ListQuery, after: ListCursor | undefined, n: number, at: number, nth: boolean): Promise<{ since: number; nth?: ListCursor }> {
    const max = sql`9223372036854775807::bigint`;
    const range =
      q.namespace !== undefined
        ? sql`(plinth_hash(c.tenant, c.resource, c.namespace), c.revision) > (plinth_hash(${q.tenant}::text, ${q.resource}::text, ${q.namespace}::text), ${at}::bigint)
            AND (plinth_hash(c.tenant, c.resource, c.namespace), c.revision) <= (plinth_hash(${q.tenant}::text, ${q.resource}::text, ${q.namespace}::text), ${max})`
        : sql`c.tenant = ${q.tenant} AND (plinth_hash(c.resource), c.revision) > (plinth_hash(${q.resource}::text), ${at}::bigint)
            AND (plinth_hash(c.resource), c.revision) <= (plinth_hash(${q.resource}::text), ${max})`;
    const { rows } = await sql<{ since: number; namespace: string | null; name: string | null }>`
      SELECT (SELECT count(*)::int FROM (SELECT 1 FROM changes c WHERE ${range} LIMIT ${this.byNameThreshold}) since) AS since, x.namespace, x.name
      FROM (SELECT 1) one LEFT JOIN LATERAL (${nth ? this.nthSql(q, after, n) : sql`SELECT NULL::text AS namespace, NULL::text AS name`}) x ON TRUE
    `.execute(trx);
    const { since, namespace, name } = rows[0];
    return { since, nth: namespace !== null && name !== null ? { namespace, name } : undefined };
  }

  /**
   * The keys of the list changed after `at` that existed at `at` (the first
   * change after `at` of each has the state before it: creates after `at`
   * have none), with that state, matching the selectors, after the cursor
   * and up to `upTo` (inclusive) when given, in key order, at most `n`. Two
   * reads, chosen by the caller:
   *
   * - few changes of the scope since `at`: all of them from the scope's
   *   revision-ordered index, sorted by key (cost: those changes);
   * - many (`byName`): migration 0013's name-ordered index over the key
   *   range, whose scan skips a key's changes at or below `at` within the
   *   index and stops after `n` keys or at the range's end (cost: the index
   *   entries in the page's key range). Sorting is disabled (see readAt)
   *   so that its plan is that ordered scan whatever the statistics say.
   */
  private async changedSince(trx: Kysely<DB>, q: ListQuery, after: ListCursor | undefined, upTo: ListCursor | undefined, n: number | null, at: number, byName: boolean): Promise<StateRow[]> {
    const prevLabels = sql`coalesce(prev_object -> 'metadata' -> 'labels', '{}'::jsonb)`;
    const filters = keyFilters(q, prevLabels, undefined);
    const limit = n === null ? sql`` : sql`LIMIT ${n}`;
    // Within one namespace the order is by name alone: ordering by the (constant) namespace too made the planner sort.
    const order = q.namespace !== undefined ? sql`name` : sql`namespace, name`;
    const read = (scope: RawBuilder<unknown>, range: RawBuilder<unknown>) => sql`(
      SELECT namespace, name, prev_revision AS revision, prev_object AS body, pg_column_size(prev_object) AS size FROM (
        SELECT DISTINCT ON (c.namespace, c.name) c.namespace, c.name, c.prev_revision, c.prev_object FROM changes c
          WHERE ${scope} ${range} AND c.revision > ${at}
          ORDER BY c.namespace, c.name, c.revision
      ) first_change
      WHERE prev_object IS NOT NULL AND ${filters} ${range}
      ORDER BY ${order} ${limit})`;
    if (!byName) {
      // upTo is only given with byName: one range, the cursor.
      const scope = changeScopeCondition({ tenant: q.tenant, resource: q.resource, namespace: q.namespace });
      const { rows } = await sql<StateRow>`${read(sql`${scope} ${keyRanges(q, after, undefined, 'c.')[0]}`, keyRanges(q, after, undefined, '')[0])}`.execute(trx);
      return rows;
    }
    const scope = sql`plinth_hash(c.tenant, c.resource) = plinth_hash(${q.tenant}::text, ${q.resource}::text) AND c.tenant = ${q.tenant} AND c.resource = ${q.resource}
      ${q.namespace !== undefined ? sql`AND c.namespace = ${q.namespace}` : sql``}`;
    const pieces = keyRanges(q, after, upTo, '');
    const cpieces = keyRanges(q, after, upTo, 'c.');
    const reads = pieces.map((p, i) => read(sql`${scope} ${cpieces[i]}`, p));
    const { rows } = await (reads.length === 1 ? sql<StateRow>`${reads[0]}` : sql<StateRow>`SELECT * FROM (${sql.join(reads, sql` UNION ALL `)}) pieces ORDER BY namespace, name ${limit}`).execute(trx);
    return rows;
  }

  /**
   * The list's `objects` rows at or below `at` (unchanged since) after the
   * cursor and up to `bound` (inclusive) when given, in key order, at most
   * `n`: one index range per piece of {@link keyRanges}.
   */
  private async unchangedSince(trx: Kysely<DB>, q: ListQuery, after: ListCursor | undefined, bound: ListCursor | undefined, n: number | null, at: number): Promise<StateRow[]> {
    const nsFilter = q.namespace !== undefined ? sql`AND namespace = ${q.namespace}` : sql``;
    const limit = n === null ? sql`` : sql`LIMIT ${n}`;
    const base = sql`tenant = ${q.tenant} AND resource = ${q.resource} ${nsFilter} ${nameLookup(q)} AND revision <= ${at} AND ${keyFilters(q, OBJECT_LABELS, undefined)}`;
    const reads = keyRanges(q, after, bound, '').map((range) => sql`(SELECT namespace, name, revision, body, pg_column_size(body) AS size FROM objects WHERE ${base} ${range} ORDER BY namespace, name ${limit})`);
    const query = reads.length === 1 ? sql<StateRow>`${reads[0]}` : sql<StateRow>`SELECT * FROM (${sql.join(reads, sql` UNION ALL `)}) up_to ORDER BY namespace, name ${limit}`;
    const { rows } = await query.execute(trx);
    return rows;
  }

  /**
   * The number of rows of the state at `at` from the cursor on, counted up
   * to REMAINING_COUNT_CAP + `n` on each side (their sum is exact below
   * that). Only called when the scope changed little since `at`.
   */
  private async stateCount(trx: Kysely<DB>, q: ListQuery, after: ListCursor | undefined, n: number, at: number): Promise<number> {
    const cap = REMAINING_COUNT_CAP + n;
    const nsFilter = q.namespace !== undefined ? sql`AND namespace = ${q.namespace}` : sql``;
    const prevLabels = sql`coalesce(prev_object -> 'metadata' -> 'labels', '{}'::jsonb)`;
    const { rows } = await sql<{ total: number }>`
      SELECT (SELECT count(*) FROM (SELECT 1 FROM objects WHERE tenant = ${q.tenant} AND resource = ${q.resource} ${nsFilter} ${nameLookup(q)}
                AND revision <= ${at} AND ${keyFilters(q, OBJECT_LABELS, after)} LIMIT ${cap}) u)
        + (SELECT count(*) FROM (SELECT 1 FROM (
                SELECT DISTINCT ON (c.namespace, c.name) c.namespace, c.name, c.prev_object FROM changes c
                  WHERE ${changeScopeCondition({ tenant: q.tenant, resource: q.resource, namespace: q.namespace })} AND c.revision > ${at}
                  ORDER BY c.namespace, c.name, c.revision
              ) first_change WHERE prev_object IS NOT NULL AND ${keyFilters(q, prevLabels, after)} LIMIT ${cap}) c) AS total
    `.execute(trx);
    return Number(rows[0].total);
  }
}

/** Two key-ordered lists with no key in common, merged in key order (byte order, as the "C" collation sorts). */
function mergeByKey(a: StateRow[], b: StateRow[]): StateRow[] {
  const out: StateRow[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) out.push(compareKeys(a[i], b[j]) < 0 ? a[i++] : b[j++]);
  while (i < a.length) out.push(a[i++]);
  while (j < b.length) out.push(b[j++]);
  return out;
}

function compareKeys(x: { namespace: string; name: string }, y: { namespace: string; name: string }): number {
  return compareByteOrder(x.namespace, y.namespace) || compareByteOrder(x.name, y.name);
}

/**
 * The keys after `after` and up to `upTo` (both optional) as conditions
 * that each make one index range PostgreSQL starts and stops at (`AND …`,
 * on columns prefixed with `prefix`): a row comparison `(namespace, name) <=
 * (…)` bounds only the namespace column's range, so across namespaces the
 * range is two pieces, the namespaces before `upTo`'s and `upTo`'s own up to
 * its name. Read each piece in key order and concatenate.
 */
function keyRanges(q: ListQuery, after: ListCursor | undefined, upTo: ListCursor | undefined, prefix: '' | 'c.'): RawBuilder<unknown>[] {
  const ns = sql.ref(`${prefix}namespace`);
  const name = sql.ref(`${prefix}name`);
  const from = after ? sql`AND ${afterCursor(q, after, ns, name)}` : sql``;
  if (!upTo) return [from];
  if (after && after.namespace === upTo.namespace) return [sql`AND ${ns} = ${upTo.namespace} AND ${name} > ${after.name} AND ${name} <= ${upTo.name}`];
  if (q.namespace !== undefined) return [sql`${from} AND ${name} <= ${upTo.name}`];
  return [sql`${from} AND ${ns} < ${upTo.namespace}`, sql`AND ${ns} = ${upTo.namespace} AND ${name} <= ${upTo.name}`];
}
