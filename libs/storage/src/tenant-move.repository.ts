import { type Kysely, sql } from 'kysely';
import type { DB } from './db.js';

/** The largest bigint: a tenant being copied in has no live changes yet (migration 0014). */
const ARRIVING = '9223372036854775807';

/**
 * A step of a move (or sweep) whose generation is no longer the one that
 * holds the tenant's row on a shard: a newer mover, a deletion or a sweep
 * took it over. The step changed nothing (migration 0021).
 */
export class StaleMoveError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StaleMoveError';
  }
}

/** True when `err` is a {@link StaleMoveError} or PostgreSQL's refusal of a stale step (SQLSTATE P0409). */
export function isStaleMove(err: unknown): boolean {
  return err instanceof StaleMoveError || (typeof err === 'object' && err !== null && (err as { code?: unknown }).code === 'P0409');
}

/** Fails the transaction unless generation `epoch` holds the tenant's row on this shard (holding it FOR SHARE). */
async function step(tx: Kysely<DB>, tenant: string, epoch: number): Promise<void> {
  await sql`SELECT plinth_move_step(${tenant}, ${epoch}::bigint)`.execute(tx);
}

/** What a move reads of the tenant on the shard it leaves. */
export interface DepartureState {
  uid: string;
  /** The uid of the Tenant object the row was made for (null: older than migration 0021). */
  objectUid: string | null;
  /** The generation that holds the row now. */
  epoch: number;
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
 * tenant mover): this class only runs statements. Every write is fenced
 * by the move's generation (`epoch`, migration 0021): it runs in one
 * transaction with the check that this generation still holds the
 * tenant's row on the shard written, and fails with
 * {@link StaleMoveError} (P0409), changing nothing, once a newer one took
 * it over.
 */
export class TenantMoveRepository {
  private shapes: Promise<TableShape[]> | undefined;

  /** The tenant's row and watermarks on the shard it leaves; undefined when it does not live there. */
  async departure(from: Kysely<DB>, tenant: string): Promise<DepartureState | undefined> {
    const { rows } = await sql<{ uid: string; object_uid: string | null; move_epoch: number; created_revision: number; floor: number; current: number }>`
      SELECT t.uid, t.object_uid, t.move_epoch, t.created_revision, greatest(t.history_floor, cs.compacted_revision) AS floor, rc.value AS current
      FROM tenants t CROSS JOIN compaction_state cs CROSS JOIN revision_counter rc WHERE t.name = ${tenant}
    `.execute(from);
    const r = rows[0];
    return (
      r && {
        uid: r.uid,
        objectUid: r.object_uid,
        epoch: Number(r.move_epoch),
        createdRevision: Number(r.created_revision),
        historyFloor: Number(r.floor),
        current: Number(r.current),
      }
    );
  }

  /**
   * Takes the tenant's row on the shard it leaves over for generation
   * `epoch` and unfences it (a fence an earlier, stale mover left is
   * lifted: that mover can no longer switch). Returns the departure state;
   * undefined when the tenant has no row there. Throws StaleMoveError when
   * a generation at least as new holds the row.
   */
  async claimSource(from: Kysely<DB>, tenant: string, epoch: number): Promise<DepartureState | undefined> {
    await sql`UPDATE tenants SET move_epoch = ${epoch}::bigint, fenced = false WHERE name = ${tenant} AND move_epoch < ${epoch}::bigint`.execute(from);
    const state = await this.departure(from, tenant);
    if (!state) return undefined;
    if (state.epoch !== epoch) throw new StaleMoveError(`tenant ${tenant} was taken over by generation ${state.epoch} (this move is ${epoch})`);
    return state;
  }

  /**
   * Takes the tenant's row on `db` over for generation `epoch` (changing
   * nothing else). Returns true when `epoch` holds it now, false when the
   * tenant has no row there; throws StaleMoveError when a newer one does.
   */
  async claim(db: Kysely<DB>, tenant: string, epoch: number): Promise<boolean> {
    await sql`UPDATE tenants SET move_epoch = ${epoch}::bigint WHERE name = ${tenant} AND move_epoch < ${epoch}::bigint`.execute(db);
    const { rows } = await sql<{ e: number }>`SELECT move_epoch AS e FROM tenants WHERE name = ${tenant}`.execute(db);
    if (rows.length === 0) return false;
    if (Number(rows[0].e) !== epoch) throw new StaleMoveError(`tenant ${tenant} is held by generation ${rows[0].e}, not ${epoch}`);
    return true;
  }

  /**
   * Takes the tenant's row on `db` over for a generation newer than any
   * that held it (a deletion, so that a mover still copying there fails).
   * Returns that generation, or undefined when the tenant has no row there
   * (with `notObjectUid`: no row made for another Tenant object than that).
   */
  async takeOver(db: Kysely<DB>, tenant: string, notObjectUid?: string): Promise<number | undefined> {
    const foreign = notObjectUid === undefined ? sql`` : sql`AND object_uid IS NOT NULL AND object_uid <> ${notObjectUid}`;
    const { rows } = await sql<{ e: number }>`UPDATE tenants SET move_epoch = move_epoch + 1 WHERE name = ${tenant} ${foreign} RETURNING move_epoch AS e`.execute(db);
    return rows[0] === undefined ? undefined : Number(rows[0].e);
  }

  /**
   * Makes room for the tenant on the destination for generation `epoch`:
   * takes its row there over (or writes it) as arriving (its copied changes
   * are history, never published; its writes refused), then removes
   * whatever an earlier, failed move or an earlier tenant of the name left
   * there. Throws StaleMoveError when a generation at least as new holds
   * the row.
   */
  async prepareArrival(to: Kysely<DB>, tenant: string, from: DepartureState, epoch: number): Promise<void> {
    const { rows } = await sql<{ name: string }>`
      INSERT INTO tenants AS t (name, uid, object_uid, phase, created_revision, fenced, arrived_revision, history_floor, move_epoch)
      VALUES (${tenant}, ${from.uid}, ${from.objectUid}, 'Active', ${from.createdRevision}, true, ${ARRIVING}::bigint, ${from.historyFloor}, ${epoch}::bigint)
      ON CONFLICT (name) DO UPDATE SET uid = EXCLUDED.uid, object_uid = EXCLUDED.object_uid, phase = 'Active', created_revision = EXCLUDED.created_revision,
        fenced = true, arrived_revision = EXCLUDED.arrived_revision, history_floor = EXCLUDED.history_floor, move_epoch = EXCLUDED.move_epoch
      WHERE t.move_epoch < EXCLUDED.move_epoch
      RETURNING t.name
    `.execute(to);
    if (rows.length === 0) throw new StaleMoveError(`tenant ${tenant}'s row on the destination is held by a newer generation than ${epoch}`);
    while ((await this.purgeRows(to, tenant, epoch, 5000)) > 0);
  }

  /**
   * Copies up to `limit` current objects of the tenant after `after` (in
   * key order) from `from` to `to`, replacing what `to` has for those
   * keys. Returns the last key copied, or undefined when none was left.
   */
  async copyObjects(from: Kysely<DB>, to: Kysely<DB>, tenant: string, epoch: number, after: { resource: string; namespace: string; name: string } | undefined, limit: number) {
    const cursor = after ? sql`AND (resource, namespace, name) > (${after.resource}, ${after.namespace}, ${after.name})` : sql``;
    const { rows } = await sql<Record<string, unknown>>`
      SELECT * FROM objects WHERE tenant = ${tenant} ${cursor} ORDER BY resource, namespace, name LIMIT ${limit}
    `.execute(from);
    await to.transaction().execute(async (tx) => {
      await step(tx, tenant, epoch);
      await this.upsert(tx, 'objects', rows, ['tenant', ...KEY_COLUMNS]);
    });
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
  async copyChanges(from: Kysely<DB>, to: Kysely<DB>, tenant: string, epoch: number, after: number, upTo: number, limit: number, recopy: boolean) {
    const { rows } = await sql<Record<string, unknown>>`
      SELECT * FROM changes WHERE tenant = ${tenant} AND revision > ${after} AND revision <= ${upTo} ORDER BY revision LIMIT ${limit}
    `.execute(from);
    if (rows.length === 0) return undefined;
    const keys = new Map<string, { resource: string; namespace: string; name: string }>();
    for (const r of rows) keys.set(`${r.resource}\u0000${r.namespace}\u0000${r.name}`, { resource: String(r.resource), namespace: String(r.namespace), name: String(r.name) });
    const current = recopy ? await this.currentOf(from, tenant, [...keys.values()]) : [];
    await to.transaction().execute(async (tx) => {
      await step(tx, tenant, epoch);
      await this.upsert(tx, 'changes', rows, ['tenant', 'revision']);
      if (recopy) await this.replaceKeys(tx, tenant, [...keys.values()], current);
    });
    return { last: Number(rows[rows.length - 1].revision), count: rows.length };
  }

  /** `from`'s current rows of these keys. */
  private async currentOf(from: Kysely<DB>, tenant: string, keys: Array<{ resource: string; namespace: string; name: string }>): Promise<Record<string, unknown>[]> {
    const { rows } = await sql<Record<string, unknown>>`
      SELECT o.* FROM objects o JOIN unnest(${keys.map((k) => k.resource)}::text[], ${keys.map((k) => k.namespace)}::text[], ${keys.map((k) => k.name)}::text[]) AS k(resource, namespace, name)
        ON o.resource = k.resource AND o.namespace = k.namespace AND o.name = k.name
      WHERE o.tenant = ${tenant}
    `.execute(from);
    return rows;
  }

  /** Makes `to`'s current rows of these keys `rows` (removed when `rows` has none of a key). */
  private async replaceKeys(to: Kysely<DB>, tenant: string, keys: Array<{ resource: string; namespace: string; name: string }>, rows: Record<string, unknown>[]): Promise<void> {
    await sql`
      DELETE FROM objects o USING unnest(${keys.map((k) => k.resource)}::text[], ${keys.map((k) => k.namespace)}::text[], ${keys.map((k) => k.name)}::text[]) AS k(resource, namespace, name)
      WHERE o.tenant = ${tenant} AND o.resource = k.resource AND o.namespace = k.namespace AND o.name = k.name
    `.execute(to);
    await this.upsert(to, 'objects', rows, ['tenant', ...KEY_COLUMNS]);
  }

  /**
   * Copies every other per-tenant table (usage, quota counts, and any table
   * added later with a `tenant` column) whole: `to`'s rows of the tenant are
   * replaced by `from`'s. Run with the tenant fenced, so they are final.
   */
  async copyRest(from: Kysely<DB>, to: Kysely<DB>, tenant: string, epoch: number): Promise<void> {
    const copies: Array<{ shape: TableShape; rows: Record<string, unknown>[] }> = [];
    for (const shape of await this.tableShapes(from)) {
      if (shape.table === 'objects' || shape.table === 'changes') continue;
      const { rows } = await sql<Record<string, unknown>>`SELECT * FROM ${sql.table(shape.table)} WHERE tenant = ${tenant}`.execute(from);
      copies.push({ shape, rows });
    }
    await to.transaction().execute(async (tx) => {
      await step(tx, tenant, epoch);
      for (const { shape, rows } of copies) {
        await sql`DELETE FROM ${sql.table(shape.table)} WHERE tenant = ${tenant}`.execute(tx);
        await this.insert(tx, shape, rows);
      }
    });
  }

  /**
   * Fences (or unfences) the tenant's writes on `db` under its revision
   * counter's lock (migration 0014). Returns the newest revision there: no
   * write of the tenant on `db` can be above it while fenced. Undefined
   * when the tenant has no row there.
   */
  async fence(db: Kysely<DB>, tenant: string, epoch: number, fenced: boolean): Promise<number | undefined> {
    return db.transaction().execute(async (tx) => {
      // The counter's lock first, as every write and plinth_fence_tenant take it, then the generation's check.
      const { rows } = await sql<{ value: number }>`SELECT value FROM revision_counter WHERE id = 1 FOR UPDATE`.execute(tx);
      const here = await sql`SELECT 1 FROM tenants WHERE name = ${tenant}`.execute(tx);
      if (here.rows.length === 0) return undefined;
      await step(tx, tenant, epoch);
      await sql`UPDATE tenants SET fenced = ${fenced} WHERE name = ${tenant}`.execute(tx);
      return Number(rows[0].value);
    });
  }

  /**
   * Makes the tenant live on `to`: raises `to`'s revision counter to at
   * least `departedAt` (so no revision the tenant was given on the shard it
   * left is given again), then marks its copied history as history and
   * unfences it, in one transaction. Returns the revision from which its
   * changes are made on `to`.
   */
  async arrive(to: Kysely<DB>, tenant: string, epoch: number, departedAt: number): Promise<number> {
    return to.transaction().execute(async (tx) => {
      await step(tx, tenant, epoch);
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
   * `db` (not its row in `tenants`), in one transaction fenced by
   * generation `epoch`. Returns how many rows went (0: none was left).
   */
  private async purgeRows(db: Kysely<DB>, tenant: string, epoch: number, limit: number): Promise<number> {
    const tables = await this.tableShapes(db);
    return db.transaction().execute(async (tx) => {
      await step(tx, tenant, epoch);
      let deleted = 0;
      for (const { table } of tables) {
        const res = await sql`
          DELETE FROM ${sql.table(table)} WHERE ctid = ANY (ARRAY(SELECT ctid FROM ${sql.table(table)} WHERE tenant = ${tenant} LIMIT ${limit}))
        `.execute(tx);
        deleted += Number(res.numAffectedRows ?? 0);
      }
      return deleted;
    });
  }

  /**
   * Removes up to `limit` rows of the tenant from each per-tenant table of
   * `db`, then, when none are left, its row, each batch fenced by
   * generation `epoch`. Returns how many rows went (0: nothing was left).
   * For the shard a tenant left, a failed move's partial copy, and rows
   * the leftover sweep found. Throws StaleMoveError once another
   * generation holds the row.
   */
  async purgeBatch(db: Kysely<DB>, tenant: string, epoch: number, limit: number): Promise<number> {
    const deleted = await this.purgeRows(db, tenant, epoch, limit);
    if (deleted === 0) await sql`DELETE FROM tenants WHERE name = ${tenant} AND move_epoch = ${epoch}::bigint`.execute(db);
    return deleted;
  }

  /** Removes everything of the tenant from `db` (batch after batch), fenced by generation `epoch`; no-op when it has no row there. */
  async discard(db: Kysely<DB>, tenant: string, epoch: number): Promise<void> {
    const here = await sql`SELECT 1 FROM tenants WHERE name = ${tenant}`.execute(db);
    if (here.rows.length === 0) return;
    while ((await this.purgeBatch(db, tenant, epoch, 5000)) > 0);
  }

  /**
   * Every tenant row on `db` with what the leftover sweep judges it by:
   * name, uid of its Tenant object, generation, phase and fence.
   */
  async rowsOn(db: Kysely<DB>): Promise<Array<{ name: string; objectUid: string | null; epoch: number; phase: string; fenced: boolean }>> {
    const { rows } = await sql<{ name: string; object_uid: string | null; move_epoch: number; phase: string; fenced: boolean }>`
      SELECT name, object_uid, move_epoch, phase, fenced FROM tenants ORDER BY name
    `.execute(db);
    return rows.map((r) => ({ name: r.name, objectUid: r.object_uid, epoch: Number(r.move_epoch), phase: r.phase, fenced: r.fenced }));
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
