import { randomUUID } from 'node:crypto';
import { type Kysely, sql } from 'kysely';
import { sweepShards } from './object-store.repository.js';
import type { DB } from './db.js';
import { type DatabaseSource, routerOf, type ShardRouter, tenantDb } from './shard-router.js';
import { StorageError } from './storage-error.js';

/** The lifecycle phase of a tenant's logical cluster. */
export type TenantPhase = 'Active' | 'Terminating';

/** A row of `tenants`: one logical cluster. */
export interface TenantRecord {
  name: string;
  uid: string;
  phase: TenantPhase;
  /** The newest revision when the tenant was created: nothing of it is older. */
  createdRevision: number;
  /** The revision from which its shard holds its changes as they happen (0 unless it moved here; see migration 0014). */
  arrivedRevision: number;
  /** The oldest revision of its history its shard holds (0 unless it moved here). */
  historyFloor: number;
  /** The uid of the Tenant object the row was created for (null: created before migration 0021, or without one). */
  objectUid?: string | null;
}

/** One limit of a tenant: at most `maxObjects` objects and `maxBytes` stored bytes under a usage key (undefined: unlimited). */
export interface TenantLimit {
  /** '' for all of the tenant's objects, a storage resource (`configmaps`, `crontabs.stable.example.com`), or `webhookconfigurations`. */
  usageKey: string;
  maxObjects?: number;
  maxBytes?: number;
}

/** A tenant's usage under one usage key, as every write keeps it. */
export interface TenantUsage {
  usageKey: string;
  objects: number;
  bytes: number;
}

/**
 * Tenants (logical clusters) and the removal of everything stored for one.
 *
 * Convention for every table that holds per-tenant rows: it has a `tenant`
 * text column. {@link TenantRepository.purgeBatch} and
 * {@link TenantRepository.countRows} find such tables in the catalog, so a
 * new table is covered without changing this class. Writes to such tables
 * must refuse tenants that are not Active (as the object write functions do
 * through `plinth_check_tenant`), or a deleted tenant could leave rows behind.
 */
export class TenantRepository {
  private tenantTables: Promise<string[]> | undefined;

  private readonly router: ShardRouter;

  constructor(source: DatabaseSource) {
    this.router = routerOf(source);
  }

  /** The database of `name`'s shard. */
  private db(name: string): Kysely<DB> | Promise<Kysely<DB>> {
    return tenantDb(this.router, name);
  }

  /**
   * Replaces the limits of an Active tenant (enforced by every write from
   * the next one on). Returns false, writing nothing, when the tenant is
   * missing, Terminating, or fenced by a move. Holds the revision counter's
   * lock, as a tenant's phase and fence change, so that a batch of writes
   * (which holds it) sees one set of limits throughout (migration 0020).
   */
  async setLimits(name: string, limits: TenantLimit[]): Promise<boolean> {
    return (await this.db(name)).transaction().execute(async (tx) => {
      await sql`SELECT 1 FROM revision_counter WHERE id = 1 FOR UPDATE`.execute(tx);
      const row = await tx.selectFrom('tenants').select(['phase', 'fenced']).where('name', '=', name).forShare().executeTakeFirst();
      // A tenant being moved (fenced) keeps its limits until it lives on its new shard (the caller retries).
      if (row?.phase !== 'Active' || row.fenced) return false;
      await tx.updateTable('tenant_usage').set({ max_objects: null, max_bytes: null }).where('tenant', '=', name).execute();
      for (const l of limits) {
        if (l.maxObjects === undefined && l.maxBytes === undefined) continue;
        const max = { max_objects: l.maxObjects ?? null, max_bytes: l.maxBytes ?? null };
        await tx
          .insertInto('tenant_usage')
          .values({ tenant: name, usage_key: l.usageKey, ...max })
          .onConflict((oc) => oc.columns(['tenant', 'usage_key']).doUpdateSet(max))
          .execute();
      }
      return true;
    });
  }

  /** The tenant's usage per usage key (keys never written to are absent). */
  async usage(name: string): Promise<TenantUsage[]> {
    const rows = await (await this.db(name)).selectFrom('tenant_usage').select(['usage_key', 'objects', 'bytes']).where('tenant', '=', name).orderBy('usage_key').execute();
    return rows.map((r) => ({ usageKey: r.usage_key, objects: Number(r.objects), bytes: Number(r.bytes) }));
  }

  /** True when the tenant exists, whatever its phase. */
  async exists(name: string): Promise<boolean> {
    return (await this.get(name)) !== undefined;
  }

  /** The tenant's row, or undefined when there is none. */
  async get(name: string): Promise<TenantRecord | undefined> {
    const row = await (await this.db(name))
      .selectFrom('tenants')
      .select(['name', 'uid', 'phase', 'created_revision', 'arrived_revision', 'history_floor', 'object_uid'])
      .where('name', '=', name)
      .executeTakeFirst();
    return (
      row && { name: row.name, uid: row.uid, phase: row.phase, createdRevision: row.created_revision, arrivedRevision: row.arrived_revision, historyFloor: row.history_floor, objectUid: row.object_uid }
    );
  }

  /**
   * Creates the tenant if missing, for the Tenant object of uid
   * `objectUid` (recorded: migration 0021); returns true when it was
   * created. Idempotent. A tenant that exists is left alone, even when
   * Terminating (its name is free again only once its deletion has
   * finished), and so is a row made for another Tenant object: the caller
   * compares {@link TenantRecord.objectUid} and waits (never adopts). Only
   * a row from before migration 0021 (no object uid) is bound to the first
   * Tenant object that ensures it.
   */
  async ensure(name: string, objectUid?: string): Promise<boolean> {
    const db = await this.db(name);
    const res = await db
      .insertInto('tenants')
      .values({
        name,
        uid: randomUUID(),
        phase: 'Active',
        created_revision: sql<number>`(SELECT value FROM revision_counter WHERE id = 1)`,
        object_uid: objectUid ?? null,
      })
      .onConflict((oc) => oc.column('name').doNothing())
      .executeTakeFirst();
    const created = Number(res.numInsertedOrUpdatedRows ?? 0) > 0;
    if (!created && objectUid) await db.updateTable('tenants').set({ object_uid: objectUid }).where('name', '=', name).where('object_uid', 'is', null).execute();
    return created;
  }

  /**
   * How many tenants live on shard `shard` (as the router says), and their
   * objects and stored bytes (the usage every write keeps). Not on the
   * request path: one statement over the shard's tenants. Throws a
   * StorageError Unavailable when the shard is not connected, or the
   * driver's error when it does not answer.
   */
  async shardTotals(shard: string): Promise<{ tenants: number; objects: number; bytes: number }> {
    const handle = this.router.shards().find((s) => s.name === shard);
    if (!handle) throw new StorageError('Unavailable', `shard "${shard}" is not connected`);
    const { rows } = await sql<{ tenant: string; objects: number | null; bytes: number | null }>`
      SELECT t.name AS tenant, u.objects, u.bytes FROM tenants t LEFT JOIN tenant_usage u ON u.tenant = t.name AND u.usage_key = ''
    `.execute(handle.db);
    const own = rows.filter((r) => this.router.owns(shard, r.tenant));
    return { tenants: own.length, objects: own.reduce((n, r) => n + Number(r.objects ?? 0), 0), bytes: own.reduce((n, r) => n + Number(r.bytes ?? 0), 0) };
  }

  /** All tenant names (of the tenants living on each shard that can be read), sorted. */
  async list(): Promise<string[]> {
    const rows = await sweepShards(this.router, Number.MAX_SAFE_INTEGER, (db) => db.selectFrom('tenants').select('name as tenant').execute());
    return [...new Set(rows.map((r) => r.tenant))].sort();
  }

  /**
   * Marks the tenant Terminating. When this returns, every write to the
   * tenant that could still commit has committed, and every later one is
   * refused (see migration 0002). Idempotent; returns false when the tenant
   * does not exist.
   */
  async markTerminating(name: string): Promise<boolean> {
    const { rows } = await sql<{ found: boolean }>`SELECT plinth_mark_tenant_terminating(${name}) AS found`.execute(await this.db(name));
    return rows[0].found;
  }

  /**
   * Deletes up to `batch` rows of a Terminating tenant from each per-tenant
   * table, each table in its own short statement (no long transaction, no
   * lock held between batches). Returns how many rows it deleted in all;
   * 0 means nothing is left. Throws StorageError Conflict when the tenant is
   * not Terminating: an Active tenant is never purged. Safe to run
   * concurrently and to retry.
   */
  async purgeBatch(name: string, batch: number): Promise<number> {
    await this.requireTerminating(name);
    let deleted = 0;
    for (const table of await this.perTenantTables()) {
      const res = await sql`
        DELETE FROM ${sql.table(table)} WHERE ctid = ANY (ARRAY(
          SELECT ctid FROM ${sql.table(table)} WHERE tenant = ${name} LIMIT ${batch}
        ))
      `.execute(await this.db(name));
      deleted += Number(res.numAffectedRows ?? 0);
    }
    return deleted;
  }

  /**
   * Removes the row of a Terminating tenant that holds no rows any more, so
   * that its name can be used again. Returns false (and removes nothing)
   * when rows remain or the tenant is missing or Active.
   */
  async remove(name: string): Promise<boolean> {
    const counts = await this.countRows(name);
    if (Object.entries(counts).some(([table, n]) => table !== 'tenants' && n > 0)) return false;
    const res = await (await this.db(name)).deleteFrom('tenants').where('name', '=', name).where('phase', '=', 'Terminating').executeTakeFirst();
    return Number(res.numDeletedRows) > 0;
  }

  /**
   * How many rows of the tenant each per-tenant table holds, plus its own
   * row in `tenants`. Reads only; for deletion progress and for tests.
   */
  async countRows(name: string): Promise<Record<string, number>> {
    const counts: Record<string, number> = {};
    for (const table of await this.perTenantTables()) {
      const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM ${sql.table(table)} WHERE tenant = ${name}`.execute(await this.db(name));
      counts[table] = rows[0].n;
    }
    const own = await (await this.db(name)).selectFrom('tenants').select((eb) => eb.fn.countAll<number>().as('n')).where('name', '=', name).executeTakeFirstOrThrow();
    counts.tenants = Number(own.n);
    return counts;
  }

  private async requireTerminating(name: string): Promise<void> {
    const t = await this.get(name);
    if (!t || t.phase !== 'Terminating') throw new StorageError('Conflict', `tenant "${name}" is not being deleted`);
  }

  /** Tables of the current schema with a `tenant` column, except `tenants` itself; read once. */
  private perTenantTables(): Promise<string[]> {
    this.tenantTables ??= sql<{ table_name: string }>`
      SELECT c.table_name FROM information_schema.columns c
      JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
      WHERE c.table_schema = current_schema() AND c.column_name = 'tenant' AND t.table_type = 'BASE TABLE'
        AND c.table_name <> 'tenants'
      ORDER BY c.table_name
    `
      .execute(this.router.shards()[0].db)
      .then((r) => r.rows.map((row) => row.table_name))
      .catch((err) => {
        this.tenantTables = undefined;
        throw err;
      });
    return this.tenantTables;
  }
}
