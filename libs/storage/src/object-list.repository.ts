import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { DB } from './db.js';
import { changeScopeCondition } from './change-scope-sql.js';
import { type StoredObject, compareByteOrder, withResourceVersion } from './object-key.js';
import { DURABLE, flushWal } from './object-store.repository.js';
import { type KeyFieldRequirement, type LabelRequirementLike, selectorSql } from './selector-sql.js';
import { StorageError } from './storage-error.js';

/** A position in key order: lists continue strictly after it. */
export interface ListCursor {
  namespace: string;
  name: string;
}

/** What to list. */
export interface ListQuery {
  tenant: string;
  resource: string;
  /** Undefined lists across all namespaces (and is required for cluster-scoped kinds). */
  namespace?: string;
  labelRequirements?: LabelRequirementLike[];
  fieldRequirements?: KeyFieldRequirement[];
  /** A further predicate that SQL cannot express (e.g. a secret's `type`); applied after reading. */
  filter?: (body: Record<string, unknown>) => boolean;
  /** At most this many items; undefined or 0 is unlimited. */
  limit?: number;
  after?: ListCursor;
  /** List the state at exactly this revision; undefined lists the newest state. */
  atRevision?: number;
  /** Whether to count the items after this page (only meaningful without selectors). */
  countRemaining?: boolean;
}

/** One page of a list. */
export interface ListResult {
  items: StoredObject[];
  /** The revision the page reflects: every change at or below it and none above. */
  revision: number;
  /** Set when more items may follow; list again with `after: next` and `atRevision: revision`. */
  next?: ListCursor;
  /** Items after this page, when counted and known. */
  remaining?: number;
}

/** How ObjectListRepository.stream sizes its chunks. */
export interface ChunkSizing {
  /** At most this many rows in the first chunk, read before anything is known about their size. */
  firstRows: number;
  /**
   * The first chunk also stops once its rows' stored bodies reach this size
   * (PostgreSQL sums them while reading): a small list is read in one
   * statement, a list of large objects still starts with a bounded chunk.
   */
  firstBytes: number;
  /** Target stored size of one chunk's bodies, in bytes. */
  bytes: number;
  /** At most this many rows a chunk, however small they are. */
  maxRows: number;
}

/** Rows of a first chunk read at a past revision, where no size cap applies. */
const UNSIZED_FIRST_ROWS = 16;

/** About 1 MiB of objects a chunk: 1,000 small objects, or a single one of a megabyte. */
export const DEFAULT_CHUNK_SIZING: ChunkSizing = { firstRows: 1000, firstBytes: 1024 * 1024, bytes: 1024 * 1024, maxRows: 1000 };

/** One chunk of a streamed list (see ObjectListRepository.stream). */
export interface ListChunk {
  /** The chunk's items that pass `filter`, in key order. */
  items: StoredObject[];
  /** Rows read for this chunk, filtered out ones included. */
  rows: number;
  /** The stored size of those rows' bodies, in bytes. */
  bytes: number;
  /** The revision of the whole list: the first chunk's, the same in every chunk. */
  revision: number;
}

interface StateRow {
  namespace: string;
  name: string;
  revision: number;
  body: Record<string, unknown>;
  total: number | null;
  /** The body's stored size in bytes (pg_column_size: compressed when PostgreSQL compressed it). */
  size: number;
  /** With a byte cap: how many rows the statement read before the cap dropped the rest (NULL without one). */
  scanned?: number | null;
}

/** The stored object of a row, or undefined when the query's `filter` rejects it. */
function toItem(q: ListQuery, row: StateRow): StoredObject | undefined {
  const body = withResourceVersion(row.body, row.revision);
  if (q.filter && !q.filter(body)) return undefined;
  return { key: { tenant: q.tenant, resource: q.resource, namespace: row.namespace, name: row.name }, revision: row.revision, body };
}

/** The stored objects of `rows` that pass the query's `filter`, in order. */
function toItems(q: ListQuery, rows: StateRow[]): StoredObject[] {
  return rows.map((r) => toItem(q, r)).filter((i): i is StoredObject => i !== undefined);
}

const CHUNK = 500;

/** An object row's labels: exactly the expression migration 0011's GIN index covers, so that label selectors use it. */
const OBJECT_LABELS = sql`coalesce(body -> 'metadata' -> 'labels', '{}'::jsonb)`;
/**
 * remainingItemCount is counted up to this many items after the cursor;
 * beyond it the field is left out (it is optional, and upstream leaves it
 * out too when it cannot know it cheaply). Counting everything made each
 * page of a million-object list scan the whole list (about 3 s a page).
 */
export const REMAINING_COUNT_CAP = 10_000;

/**
 * Changes of a list's scope since its revision from which a page at that
 * revision reads the changed keys by name (migration 0013's index) instead of
 * sorting all of them: below it, the sort costs a few milliseconds; above it,
 * the by-name scan reads at most about `limit / threshold` of the scope's
 * kept history per page.
 */
export const BY_NAME_THRESHOLD = 4000;

/**
 * Lists objects at the newest revision or at a past one, in key order
 * (namespace, name), one consistent snapshot per call: a page of the newest
 * state is one SQL statement, a page at a past revision a few statements in
 * one REPEATABLE READ transaction, and later pages are read at the first
 * page's revision, so the pages of one list show one snapshot.
 *
 * The state at revision R is: the current rows with revision ≤ R, plus, for
 * each key changed after R, the `prev_object` of its first change after R.
 * It only needs the changes above R, so it works for any R the change log
 * still covers (R ≥ the compacted revision).
 */
export class ObjectListRepository {
  private readonly byNameThreshold: number;

  /** `options.byNameThreshold`: see {@link BY_NAME_THRESHOLD} (tests lower it to exercise both reads of a past page). */
  constructor(
    private readonly db: Kysely<DB>,
    options: { byNameThreshold?: number } = {},
  ) {
    this.byNameThreshold = options.byNameThreshold ?? BY_NAME_THRESHOLD;
  }

  /** The newest committed revision. */
  async currentRevision(): Promise<number> {
    const row = await this.db.selectFrom('revision_counter').select('value').executeTakeFirstOrThrow();
    return row.value;
  }

  /** Throws StorageError Expired when `atRevision` is compacted, TooLargeResourceVersion when in the future. */
  async list(q: ListQuery): Promise<ListResult> {
    const limit = q.limit && q.limit > 0 ? q.limit : undefined;
    const items: StoredObject[] = [];
    let after = q.after;
    let revision = q.atRevision;
    let remaining: number | undefined;
    for (;;) {
      if (!limit) {
        const all = await this.readChunk(q, after, null, revision);
        return { items: toItems(q, all.rows), revision: all.revision };
      }
      const want = limit - items.length;
      const chunk = q.filter ? Math.max(want, Math.min(CHUNK, limit * 2)) : want;
      const page = await this.readChunk(q, after, chunk + 1, revision);
      revision = page.revision;
      const rows = page.rows.slice(0, chunk);
      const more = page.rows.length > chunk;
      for (const [i, row] of rows.entries()) {
        const item = toItem(q, row);
        if (!item) continue;
        items.push(item);
        if (items.length === limit) {
          const exhausted = !more && i === rows.length - 1;
          if (exhausted) return { items, revision };
          // Known only while the bounded count did not reach its cap.
          if (q.countRemaining && !q.filter && row.total !== null && Number(row.total) < REMAINING_COUNT_CAP + chunk + 1) remaining = Number(row.total) - (i + 1);
          return { items, revision, next: { namespace: row.namespace, name: row.name }, remaining };
        }
      }
      if (!more) return { items, revision };
      const last = rows[rows.length - 1];
      after = { namespace: last.namespace, name: last.name };
      // A filtered page that scanned a full chunk may end short; the cursor says where to go on.
      return { items, revision, next: after };
    }
  }

  /**
   * Streams the whole list (`q.limit` and `q.countRemaining` are ignored) in
   * key order, one SQL statement per chunk. Chunks hold about
   * `sizing.bytes` of stored bodies: the first reads up to
   * `sizing.firstRows` rows and stops at `sizing.firstBytes` (so a small
   * list takes one statement), each later one as many as fit at the
   * previous chunk's average row size (1 to `sizing.maxRows`). The first chunk reads the newest state (or
   * `q.atRevision`) and later chunks read at its revision, so every chunk
   * shows one snapshot, however many writes happen while the caller is slow.
   * Yields at least one chunk (possibly empty). Throws as `list` does, from
   * the first chunk or later (Expired if compaction passes the list's
   * revision while it is read); nothing is held between chunks.
   */
  async *stream(q: ListQuery, sizing: Partial<ChunkSizing> = {}): AsyncGenerator<ListChunk, void, undefined> {
    const size = { ...DEFAULT_CHUNK_SIZING, ...sizing };
    const query = { ...q, countRemaining: false };
    let after = q.after;
    let revision = q.atRevision;
    // The newest state's first chunk is capped by size in SQL; a first chunk at a past revision (no cap there) starts small.
    let n = revision === undefined ? size.firstRows : Math.min(size.firstRows, UNSIZED_FIRST_ROWS);
    for (let first = true; ; first = false) {
      const read = first && revision === undefined ? await this.readLatest(query, after, n, size.firstBytes) : await this.readChunk(query, after, n, revision);
      revision = read.revision;
      const bytes = read.rows.reduce((sum, r) => sum + Number(r.size), 0);
      yield { items: toItems(q, read.rows), rows: read.rows.length, bytes, revision };
      // A chunk that read fewer rows than asked, and kept all it read, was the last; one whose byte cap dropped
      // rows goes on after its last kept row; a full one may be followed by nothing, which the next (empty) read tells.
      if (read.scanned < n && read.rows.length === read.scanned) return;
      const last = read.rows[read.rows.length - 1];
      after = { namespace: last.namespace, name: last.name };
      n = Math.min(size.maxRows, Math.max(1, Math.floor(size.bytes / Math.max(1, bytes / read.rows.length))));
    }
  }

  private async readChunk(q: ListQuery, after: ListCursor | undefined, n: number | null, atRevision?: number): Promise<{ rows: StateRow[]; revision: number; scanned: number }> {
    const read = atRevision === undefined ? await this.readLatest(q, after, n) : await this.readAt(q, after, n, atRevision);
    return { ...read, scanned: read.rows.length };
  }

  private keyFilters(q: ListQuery, labels: RawBuilder<unknown>, after: ListCursor | undefined): RawBuilder<boolean> {
    const parts: RawBuilder<boolean>[] = [
      selectorSql(labels, sql.ref('namespace'), sql.ref('name'), q.labelRequirements, q.fieldRequirements),
    ];
    if (q.namespace !== undefined) parts.push(sql<boolean>`namespace = ${q.namespace}`);
    if (after) parts.push(afterCursor(q, after, sql.ref('namespace'), sql.ref('name')));
    return sql<boolean>`${sql.join(parts, sql` AND `)}`;
  }

  /**
   * The number of rows of `source` matching the list from the cursor on,
   * counted up to REMAINING_COUNT_CAP + `n` (bounded work per page), or NULL
   * when not asked for.
   */
  private totalSql(q: ListQuery, table: RawBuilder<unknown>, base: RawBuilder<boolean>, labels: RawBuilder<unknown>, after: ListCursor | undefined, n: number | null): RawBuilder<unknown> {
    if (!q.countRemaining || n === null) return sql`NULL::bigint`;
    return sql`(SELECT count(*) FROM (SELECT 1 FROM ${table} WHERE ${base} AND ${this.keyFilters(q, labels, after)} LIMIT ${REMAINING_COUNT_CAP + n}) counted)`;
  }

  /**
   * Reads up to `n` rows of the newest state. With `maxBytes`, only the
   * rows before the one whose stored body makes their sum reach it are kept
   * (at least one); `scanned` says how many were read before that cap.
   */
  private async readLatest(q: ListQuery, after: ListCursor | undefined, n: number | null, maxBytes?: number): Promise<{ rows: StateRow[]; revision: number; scanned: number }> {
    const limited = sql`
        SELECT namespace, name, revision, body
        FROM objects
        WHERE tenant = ${q.tenant} AND resource = ${q.resource} ${nameLookup(q)} AND ${this.keyFilters(q, OBJECT_LABELS, after)}
        ORDER BY namespace, name
        LIMIT ${n}`;
    const source =
      maxBytes === undefined
        ? sql`SELECT namespace, name, revision, body, NULL::bigint AS scanned FROM (${limited}) lim`
        : sql`SELECT namespace, name, revision, body, scanned FROM (
            SELECT lim.*, count(*) OVER () AS scanned,
              coalesce(sum(pg_column_size(body)) OVER (ORDER BY namespace, name ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS before
            FROM (${limited}) lim
          ) sized WHERE before < ${maxBytes} ORDER BY namespace, name`;
    const { rows } = await sql<StateRow & { list_revision: number; durable: boolean }>`
      SELECT rc.value AS list_revision, ${DURABLE} AS durable, o.namespace, o.name, o.revision, o.body, pg_column_size(o.body) AS size, o.scanned,
        ${this.totalSql(q, sql`objects`, sql<boolean>`tenant = ${q.tenant} AND resource = ${q.resource} ${nameLookup(q)}`, OBJECT_LABELS, after, n)} AS total
      FROM revision_counter rc
      LEFT JOIN LATERAL (${source}) o ON TRUE
    `.execute(this.db);
    const revision = rows[0].list_revision;
    if (!rows[0].durable) await flushWal(this.db);
    const found = rows.filter((r) => r.name !== null);
    return { rows: found, revision, scanned: found.length > 0 && found[0].scanned != null ? Number(found[0].scanned) : found.length };
  }

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
  private async readAt(q: ListQuery, after: ListCursor | undefined, n: number | null, at: number): Promise<{ rows: StateRow[]; revision: number }> {
    let durable = true;
    const rows = await this.db
      .transaction()
      .setIsolationLevel('repeatable read')
      .setAccessMode('read only')
      .execute(async (trx) => {
        // A page reads ordered index ranges only: sorting, bitmap and sequential scans are disabled for the statements after
        // this one (the sort of the few changes since `at` is still done when that is the read chosen), so that stale
        // statistics cannot turn a bounded range into a read of every change since `at`.
        const planned = n === null ? sql`` : sql`, set_config('enable_sort', 'off', true), set_config('enable_bitmapscan', 'off', true), set_config('enable_seqscan', 'off', true)`;
        const { rows: marks } = await sql<{ compacted: number; current: number; durable: boolean }>`
          SELECT cs.compacted_revision AS compacted, rc.value AS current, ${DURABLE} AS durable ${planned} FROM compaction_state cs CROSS JOIN revision_counter rc
        `.execute(trx);
        const { compacted, current } = marks[0];
        durable = marks[0].durable;
        if (at < compacted) throw new StorageError('Expired', `too old resource version: ${at} (${compacted})`, current, compacted);
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
    if (!durable) await flushWal(this.db);
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
    const filters = this.keyFilters(q, prevLabels, undefined);
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
    const base = sql`tenant = ${q.tenant} AND resource = ${q.resource} ${nsFilter} ${nameLookup(q)} AND revision <= ${at} AND ${this.keyFilters(q, OBJECT_LABELS, undefined)}`;
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
                AND revision <= ${at} AND ${this.keyFilters(q, OBJECT_LABELS, after)} LIMIT ${cap}) u)
        + (SELECT count(*) FROM (SELECT 1 FROM (
                SELECT DISTINCT ON (c.namespace, c.name) c.namespace, c.name, c.prev_object FROM changes c
                  WHERE ${changeScopeCondition({ tenant: q.tenant, resource: q.resource, namespace: q.namespace })} AND c.revision > ${at}
                  ORDER BY c.namespace, c.name, c.revision
              ) first_change WHERE prev_object IS NOT NULL AND ${this.keyFilters(q, prevLabels, after)} LIMIT ${cap}) c) AS total
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

/**
 * The condition "after the cursor" in key order. Within one namespace it is
 * `name > cursor name`: the row comparison `(namespace, name) > (…)` next to
 * `namespace = …` made PostgreSQL start the primary key scan at the
 * namespace's first key and filter its way to the cursor (95 ms for a page
 * 900,000 keys into a namespace instead of 0.1 ms).
 */
function afterCursor(q: ListQuery, after: ListCursor, namespaceCol: RawBuilder<unknown>, nameCol: RawBuilder<unknown>): RawBuilder<boolean> {
  if (q.namespace !== undefined && after.namespace === q.namespace) return sql<boolean>`${nameCol} > ${after.name}`;
  return sql<boolean>`(${namespaceCol}, ${nameCol}) > (${after.namespace}, ${after.name})`;
}

/**
 * For a list across namespaces that selects one name (`metadata.name=`):
 * the condition on migration 0011's hashed name index (the name itself is
 * compared by the selector too). Nothing otherwise: within one namespace
 * the primary key finds the name.
 */
function nameLookup(q: ListQuery): RawBuilder<unknown> {
  const byName = q.namespace === undefined ? q.fieldRequirements?.find((f) => f.field === 'metadata.name' && f.operator === '=') : undefined;
  return byName ? sql`AND plinth_hash(tenant, resource, name) = plinth_hash(${q.tenant}::text, ${q.resource}::text, ${byName.value}::text)` : sql``;
}
