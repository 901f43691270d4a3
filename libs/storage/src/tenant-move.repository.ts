import { type Kysely, sql } from 'kysely';
import type { DB } from './db.js';

/** The largest bigint: a tenant being copied in has no live changes yet (migration 0014). */
const ARRIVING = '9223372036854775807';

/** What a move reads of the tenant on the shard it leaves. */
export interface DepartureState {
  uid: string;
  createdRevision: number;
  /** The oldest revision of the tenant's history kept there (its own floor, or the shard's compaction). */
  historyFloor: number;
  /** The shard's newest revision when read. */
  current: number;
}

/** Columns of a per-tenant table that can be written (generated columns are left out). */
interface TableShape {
  table: string;
  columns: string[];
}

const KEY_COLUMNS = ['resource', 'namespace', 'name'] as const;

/**
 * The SQL of a live move of one tenant between two shards (two PostgreSQL
 * databases): reads on the shard it leaves, writes on the one it goes to,
 * each statement about that one tenant. Rows are copied as they are (same
 * revisions, same stored bodies), so the tenant's history resumes on the
 * destination. The move's order and guarantees are the caller's (the
 * tenant mover): this class only runs statements. Every method may be
 * retried.
 */
export class TenantMoveRepository {
  private shapes: Promise<TableShape[]> | undefined;

  /** The tenant's row and watermarks on the shard it leaves; undefined when it does not live there. */
  async departure(from: Kysely<DB>, tenant: string): Promise<DepartureState | undefined> {
    const { rows } = await sql<{ uid: string; created_revision: number; floor: number; current: number }>`
      SELECT t.uid, t.created_revision, greatest(t.history_floor, cs.compacted_revision) AS floor, rc.value AS current
      FROM tenants t CROSS JOIN compaction_state cs CROSS JOIN revision_counter rc WHERE t.name = ${tenant}
    `.execute(from);
    const r = rows[0];
    return r && { uid: r.uid, createdRevision: Number(r.created_revision), historyFloor: Number(r.floor), current: Number(r.current) };
  }

  /**
   * Makes room for the tenant on the destination: removes whatever an
   * earlier, failed move left there, then writes its row as arriving (its
   * copied changes are history, never published; its writes refused).
   */
  async prepareArrival(to: Kysely<DB>, tenant: string, from: DepartureState): Promise<void> {
    await this.discard(to, tenant);
    await sql`
      INSERT INTO tenants (name, uid, phase, created_revision, fenced, arrived_revision, history_floor)
      VALUES (${tenant}, ${from.uid}, 'Active', ${from.createdRevision}, true, ${ARRIVING}::bigint, ${from.historyFloor})
    `.execute(to);
  }

  /**
   * Copies up to `limit` current objects of the tenant after `after` (in
   * key order) from `from` to `to`, replacing what `to` has for those
   * keys. Returns the last key copied, or undefined when none was left.
   */
  async copyObjects(from: Kysely<DB>, to: Kysely<DB>, tenant: string, after: { resource: string; namespace: string; name: string } | undefined, limit: number) {
    const cursor = after ? sql`AND (resource, namespace, name) > (${after.resource}, ${after.namespace}, ${after.name})` : sql``;
    const { rows } = await sql<Record<string, unknown>>`
      SELECT * FROM objects WHERE tenant = ${tenant} ${cursor} ORDER BY resource, namespace, name LIMIT ${limit}
    `.execute(from);
    await this.upsert(to, 'objects', rows, ['tenant', ...KEY_COLUMNS]);
    const last = rows[rows.length - 1];
    return last ? { resource: String(last.resource), namespace: String(last.namespace), name: String(last.name), count: rows.length } : undefined;
  }

  /**
   * Copies the tenant's change-log rows with revision in (`after`, `upTo`]
   * from `from` to `to`, up to `limit` of them; with `recopy`, also the
   * current state of every key they touched (or its removal from `to` when
   * it is gone on `from`): changes made after the objects were copied.
   * Returns the last revision copied and how many rows; undefined when
   * there were none.
   */
  async copyChanges(from: Kysely<DB>, to: Kysely<DB>, tenant: string, after: number, upTo: number, limit: number, recopy: boolean) {
    const { rows } = await sql<Record<string, unknown>>`
      SELECT * FROM changes WHERE tenant = ${tenant} AND revision > ${after} AND revision <= ${upTo} ORDER BY revision LIMIT ${limit}
    `.execute(from);
    if (rows.length === 0) return undefined;
    await this.upsert(to, 'changes', rows, ['tenant', 'revision']);
    if (!recopy) return { last: Number(rows[rows.length - 1].revision), count: rows.length };
    const keys = new Map<string, { resource: string; namespace: string; name: string }>();
    for (const r of rows) keys.set(`${r.resource}\u0000${r.namespace}\u0000${r.name}`, { resource: String(r.resource), namespace: String(r.namespace), name: String(r.name) });
    await this.recopyKeys(from, to, tenant, [...keys.values()]);
    return { last: Number(rows[rows.length - 1].revision), count: rows.length };
  }

  /** Makes `to`'s current rows of these keys what `from` has now (removed when `from` has none). */
  private async recopyKeys(from: Kysely<DB>, to: Kysely<DB>, tenant: string, keys: Array<{ resource: string; namespace: string; name: string }>): Promise<void> {
    const r = keys.map((k) => k.resource);
    const ns = keys.map((k) => k.namespace);
    const n = keys.map((k) => k.name);
    const { rows } = await sql<Record<string, unknown>>`
      SELECT o.* FROM objects o JOIN unnest(${r}::text[], ${ns}::text[], ${n}::text[]) AS k(resource, namespace, name)
        ON o.resource = k.resource AND o.namespace = k.namespace AND o.name = k.name
      WHERE o.tenant = ${tenant}
    `.execute(from);
    await sql`
      DELETE FROM objects o USING unnest(${r}::text[], ${ns}::text[], ${n}::text[]) AS k(resource, namespace, name)
      WHERE o.tenant = ${tenant} AND o.resource = k.resource AND o.namespace = k.namespace AND o.name = k.name
    `.execute(to);
    await this.upsert(to, 'objects', rows, ['tenant', ...KEY_COLUMNS]);
  }

  /**
   * Copies every other per-tenant table (usage, quota counts, and any table
   * added later with a `tenant` column) whole: `to`'s rows of the tenant are
   * replaced by `from`'s. Run with the tenant fenced, so they are final.
   */
  async copyRest(from: Kysely<DB>, to: Kysely<DB>, tenant: string): Promise<void> {
    for (const shape of await this.tableShapes(from)) {
      if (shape.table === 'objects' || shape.table === 'changes') continue;
      const { rows } = await sql<Record<string, unknown>>`SELECT * FROM ${sql.table(shape.table)} WHERE tenant = ${tenant}`.execute(from);
      await sql`DELETE FROM ${sql.table(shape.table)} WHERE tenant = ${tenant}`.execute(to);
      await this.insert(to, shape, rows);
    }
  }

  /**
   * Fences (or unfences) the tenant's writes on `db` under its revision
   * counter's lock (migration 0014). Returns the newest revision there: no
   * write of the tenant on `db` can be above it while fenced. Undefined
   * when the tenant has no row there.
   */
  async fence(db: Kysely<DB>, tenant: string, fenced: boolean): Promise<number | undefined> {
    const { rows } = await sql<{ r: number | null }>`SELECT plinth_fence_tenant(${tenant}, ${fenced}) AS r`.execute(db);
    return rows[0].r === null ? undefined : Number(rows[0].r);
  }

  /**
   * Makes the tenant live on `to`: raises `to`'s revision counter to at
   * least `departedAt` (so no revision the tenant was given on the shard it
   * left is given again), then marks its copied history as history and
   * unfences it, in one transaction. Returns the revision from which its
   * changes are made on `to`.
   */
  async arrive(to: Kysely<DB>, tenant: string, departedAt: number): Promise<number> {
    return to.transaction().execute(async (tx) => {
      const { rows } = await sql<{ value: number }>`
        UPDATE revision_counter SET value = greatest(value, ${departedAt}::bigint) WHERE id = 1 RETURNING value
      `.execute(tx);
      const since = Number(rows[0].value) + 1;
      await sql`UPDATE tenants SET arrived_revision = ${since}, fenced = false WHERE name = ${tenant}`.execute(tx);
      return since;
    });
  }

  /**
   * Removes up to `limit` rows of the tenant from each per-tenant table of
   * `db`, then, when none are left, its row. Returns how many rows went
   * (0: nothing was left). For the shard a tenant left, and for a failed
   * move's partial copy.
   */
  async purgeBatch(db: Kysely<DB>, tenant: string, limit: number): Promise<number> {
    let deleted = 0;
    for (const { table } of await this.tableShapes(db)) {
      const res = await sql`
        DELETE FROM ${sql.table(table)} WHERE ctid = ANY (ARRAY(SELECT ctid FROM ${sql.table(table)} WHERE tenant = ${tenant} LIMIT ${limit}))
      `.execute(db);
      deleted += Number(res.numAffectedRows ?? 0);
    }
    if (deleted === 0) await sql`DELETE FROM tenants WHERE name = ${tenant}`.execute(db);
    return deleted;
  }

  /** Removes everything of the tenant from `db` (batch after batch). */
  async discard(db: Kysely<DB>, tenant: string): Promise<void> {
    while ((await this.purgeBatch(db, tenant, 5000)) > 0);
  }

  /** Inserts `rows` into `table` of `db`, replacing rows with the same `key`. */
  private async upsert(db: Kysely<DB>, table: string, rows: Record<string, unknown>[], key: string[]): Promise<void> {
    if (rows.length === 0) return;
    const shape = (await this.tableShapes(db)).find((s) => s.table === table)!;
    await this.insert(db, shape, rows, key);
  }

  private async insert(db: Kysely<DB>, shape: TableShape, rows: Record<string, unknown>[], conflictKey?: string[]): Promise<void> {
    // At most ~30,000 parameters per statement (PostgreSQL allows 65,535).
    const per = Math.max(1, Math.floor(30_000 / shape.columns.length));
    for (let i = 0; i < rows.length; i += per) {
      const chunk = rows.slice(i, i + per);
      const values = chunk.map((row) => sql`(${sql.join(shape.columns.map((c) => param(row[c])))})`);
      const update = shape.columns.filter((c) => !conflictKey?.includes(c));
      const onConflict = conflictKey
        ? sql` ON CONFLICT (${sql.join(conflictKey.map((c) => sql.ref(c)))}) DO UPDATE SET ${sql.join(update.map((c) => sql`${sql.ref(c)} = EXCLUDED.${sql.ref(c)}`))}`
        : sql``;
      await sql`INSERT INTO ${sql.table(shape.table)} (${sql.join(shape.columns.map((c) => sql.ref(c)))}) VALUES ${sql.join(values)}${onConflict}`.execute(db);
    }
  }

  /** Tables with a `tenant` column (except `tenants`) and their writable columns, read once from the catalog. */
  private tableShapes(db: Kysely<DB>): Promise<TableShape[]> {
    this.shapes ??= sql<{ table_name: string; columns: string[] }>`
      SELECT c.table_name, array_agg(c.column_name::text ORDER BY c.ordinal_position) AS columns
      FROM information_schema.columns c
      JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
      WHERE c.table_schema = current_schema() AND t.table_type = 'BASE TABLE' AND c.table_name <> 'tenants' AND c.is_generated = 'NEVER'
        AND c.table_name IN (SELECT table_name FROM information_schema.columns WHERE table_schema = current_schema() AND column_name = 'tenant')
      GROUP BY c.table_name ORDER BY c.table_name
    `
      .execute(db)
      .then((r) => r.rows.map((row) => ({ table: row.table_name, columns: row.columns })))
      .catch((err) => {
        this.shapes = undefined;
        throw err;
      });
    return this.shapes;
  }
}

/** A value read with `SELECT *` as a parameter of the same column: JSON documents as JSON text. */
function param(v: unknown) {
  if (v !== null && typeof v === 'object' && !(v instanceof Date) && !Buffer.isBuffer(v)) return sql`${JSON.stringify(v)}::jsonb`;
  return sql`${v}`;
}
