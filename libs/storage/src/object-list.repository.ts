import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { DB } from './db.js';
import { keyFilters, nameLookup, OBJECT_LABELS, REMAINING_COUNT_CAP, type StateRow } from './list-sql.js';
import { type StoredObject, withResourceVersion } from './object-key.js';
import { DURABLE, flushWal } from './object-store.repository.js';
import { BY_NAME_THRESHOLD, PastStateReader } from './past-state-reader.js';
import { type DatabaseSource, routerOf, type ShardRouter, tenantDb } from './shard-router.js';
import { type StorageTracer, traced } from './storage-tracer.js';
import type { KeyFieldRequirement, LabelRequirementLike } from './selector-sql.js';
import { openBody, prepareBodies } from './value/stored-body.js';
import { CorruptObjectError, corruptObjectReporting, MAX_REPORTED_CORRUPT_OBJECTS, UnreadableObjectsError } from './value/corrupt-object.js';

export { REMAINING_COUNT_CAP } from './list-sql.js';
export { BY_NAME_THRESHOLD } from './past-state-reader.js';

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


/**
 * The stored object of a row (decrypted), or undefined when the query's
 * `filter` rejects it. Throws StorageError Internal naming the key when it
 * cannot be decrypted: as upstream, the whole list fails (selectors on
 * names and labels, applied in SQL, can leave it out).
 */
function toItem(q: ListQuery, row: StateRow): StoredObject | undefined {
  const key = { tenant: q.tenant, resource: q.resource, namespace: row.namespace, name: row.name };
  let opened: Record<string, unknown>;
  try {
    opened = openBody(key, row.body, { inList: true, cached: true });
  } catch (err) {
    const met = unreadable.get(q);
    if (!met || !(err instanceof CorruptObjectError)) throw err;
    met.push(err);
    return undefined;
  }
  const body = withResourceVersion(opened, row.revision);
  if (q.filter && !q.filter(body)) return undefined;
  return { key, revision: row.revision, body };
}

/** Fetches ahead the data keys the rows' bodies need (KMS v2 on a cache miss); nothing to await on the hot path. */
async function prepareRows(q: ListQuery, rows: StateRow[]): Promise<void> {
  const p = prepareBodies(rows.map((r) => ({ key: { tenant: q.tenant, resource: q.resource, namespace: r.namespace, name: r.name }, body: r.body })));
  if (p) await p;
}

/** The stored objects of `rows` that pass the query's `filter`, in order. */
function toItems(q: ListQuery, rows: StateRow[]): StoredObject[] {
  return rows.map((r) => toItem(q, r)).filter((i): i is StoredObject => i !== undefined);
}

const CHUNK = 500;

/** The unreadable objects a list met, per query, while corrupt-object reporting is on (see ObjectListRepository.list). */
const unreadable = new WeakMap<ListQuery, CorruptObjectError[]>();



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
  private readonly past: PastStateReader;
  private readonly router: ShardRouter;
  private readonly tracer: StorageTracer | undefined;

  /**
   * `options.byNameThreshold`: see {@link BY_NAME_THRESHOLD} (tests lower it to exercise both reads of a past page);
   * `options.tracer`: one span per list, and per chunk of a stream (see StorageTracer); unset, none.
   */
  constructor(
    source: DatabaseSource,
    options: { byNameThreshold?: number; tracer?: StorageTracer } = {},
  ) {
    this.router = routerOf(source);
    this.tracer = options.tracer;
    this.past = new PastStateReader(this.router, options.byNameThreshold ?? BY_NAME_THRESHOLD);
  }

  /** The newest committed revision of `tenant`'s shard (the default shard when omitted). */
  async currentRevision(tenant?: string): Promise<number> {
    const db = tenant === undefined ? this.router.shards()[0].db : await tenantDb(this.router, tenant);
    const row = await db.selectFrom('revision_counter').select('value').executeTakeFirstOrThrow();
    return row.value;
  }

  /**
   * Throws StorageError Expired when `atRevision` is compacted, TooLargeResourceVersion when in the future.
   * An unreadable object fails the list (StorageError Internal naming its key); while corrupt-object
   * reporting is on (AllowUnsafeMalformedObjectDeletion), the page is read to its end and
   * UnreadableObjectsError names every unreadable object met.
   */
  list(q: ListQuery): Promise<ListResult> {
    return traced(this.tracer, 'list', q, async (span) => {
      const page = await this.listChecked(q);
      span?.setAttribute('items', page.items.length);
      return page;
    });
  }

  private async listChecked(q: ListQuery): Promise<ListResult> {
    if (!corruptObjectReporting()) return this.listPage(q);
    const met: CorruptObjectError[] = [];
    unreadable.set(q, met);
    try {
      const page = await this.listPage(q);
      if (met.length > 0) throw new UnreadableObjectsError(q.resource, met.slice(0, MAX_REPORTED_CORRUPT_OBJECTS));
      return page;
    } finally {
      unreadable.delete(q);
    }
  }

  private async listPage(q: ListQuery): Promise<ListResult> {
    const limit = q.limit && q.limit > 0 ? q.limit : undefined;
    const items: StoredObject[] = [];
    let after = q.after;
    let revision = q.atRevision;
    let remaining: number | undefined;
    for (;;) {
      if (!limit) {
        const all = await this.readChunk(q, after, null, revision);
        await prepareRows(q, all.rows);
        return { items: toItems(q, all.rows), revision: all.revision };
      }
      const want = limit - items.length;
      const chunk = q.filter ? Math.max(want, Math.min(CHUNK, limit * 2)) : want;
      const page = await this.readChunk(q, after, chunk + 1, revision);
      await prepareRows(q, page.rows);
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
    if (!corruptObjectReporting()) return yield* this.chunks(q, sizing);
    // While unreadable objects are reported (AllowUnsafeMalformedObjectDeletion), the whole list is read before its
    // first chunk is yielded, so that the caller can still answer StorageReadError naming every one (as upstream,
    // which holds an unpaginated list in memory anyway); the memory bound of streaming does not hold then.
    const met: CorruptObjectError[] = [];
    unreadable.set(q, met);
    const read: ListChunk[] = [];
    try {
      for await (const chunk of this.chunks(q, sizing)) read.push(chunk);
    } finally {
      unreadable.delete(q);
    }
    if (met.length > 0) throw new UnreadableObjectsError(q.resource, met.slice(0, MAX_REPORTED_CORRUPT_OBJECTS));
    yield* read;
  }

  private async *chunks(q: ListQuery, sizing: Partial<ChunkSizing>): AsyncGenerator<ListChunk, void, undefined> {
    const size = { ...DEFAULT_CHUNK_SIZING, ...sizing };
    const query = { ...q, countRemaining: false };
    let after = q.after;
    let revision = q.atRevision;
    // The newest state's first chunk is capped by size in SQL; a first chunk at a past revision (no cap there) starts small.
    let n = revision === undefined ? size.firstRows : Math.min(size.firstRows, UNSIZED_FIRST_ROWS);
    for (let first = true; ; first = false) {
      const at = revision;
      const read = await traced(this.tracer, 'list', q, () => (first && at === undefined ? this.readLatest(query, after, n, size.firstBytes) : this.readChunk(query, after, n, at)));
      revision = read.revision;
      await prepareRows(q, read.rows);
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
    const read = atRevision === undefined ? await this.readLatest(q, after, n) : await this.past.read(q, after, n, atRevision);
    return { ...read, scanned: read.rows.length };
  }


  /**
   * The number of rows of `source` matching the list from the cursor on,
   * counted up to REMAINING_COUNT_CAP + `n` (bounded work per page), or NULL
   * when not asked for.
   */
  private totalSql(q: ListQuery, table: RawBuilder<unknown>, base: RawBuilder<boolean>, labels: RawBuilder<unknown>, after: ListCursor | undefined, n: number | null): RawBuilder<unknown> {
    if (!q.countRemaining || n === null) return sql`NULL::bigint`;
    return sql`(SELECT count(*) FROM (SELECT 1 FROM ${table} WHERE ${base} AND ${keyFilters(q, labels, after)} LIMIT ${REMAINING_COUNT_CAP + n}) counted)`;
  }

  /**
   * Reads up to `n` rows of the newest state. With `maxBytes`, only the
   * rows before the one whose stored body makes their sum reach it are kept
   * (at least one); `scanned` says how many were read before that cap.
   */
  private async readLatest(q: ListQuery, after: ListCursor | undefined, n: number | null, maxBytes?: number): Promise<{ rows: StateRow[]; revision: number; scanned: number }> {
    const db = await tenantDb(this.router, q.tenant);
    const limited = sql`
        SELECT namespace, name, revision, body
        FROM objects
        WHERE tenant = ${q.tenant} AND resource = ${q.resource} ${nameLookup(q)} AND ${keyFilters(q, OBJECT_LABELS, after)}
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
    `.execute(db);
    const revision = rows[0].list_revision;
    if (!rows[0].durable) await flushWal(db);
    const found = rows.filter((r) => r.name !== null);
    return { rows: found, revision, scanned: found.length > 0 && found[0].scanned != null ? Number(found[0].scanned) : found.length };
  }

}



