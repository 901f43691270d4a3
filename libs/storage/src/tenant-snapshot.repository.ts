import { type Kysely, sql } from 'kysely';
import type { DB } from './db.js';
import type { ObjectKey } from './object-key.js';
import { withoutResourceVersion } from './object-key.js';
import { mapWriteError } from './object-store.repository.js';
import { sealBody } from './value/stored-body.js';
import { withDataKeys } from './value/value-transformer.js';
import { type DatabaseSource, routerOf, type ShardRouter, tenantDb } from './shard-router.js';
import { tenantScoped } from './tenant-scope.js';
import { StorageError } from './storage-error.js';

/** The oldest revision of `tenant`'s history: its creation (a re-created name starts anew), its shard's compaction, the floor of a moved-in history. */
const historyFloor = (tenant: string) =>
  sql<number>`greatest((SELECT compacted_revision FROM compaction_state), coalesce((SELECT greatest(history_floor, created_revision) FROM tenants WHERE name = ${tenant}), 0))`;

/** A current object of a tenant as the emptiness check of a restore sees it: its key and labels (labels stay readable when encrypted). */
export interface CurrentKey extends ObjectKey {
  labels: Record<string, string>;
}

/** Writes per call of the batched-write procedure (as the write batcher: each is a subtransaction, and PostgreSQL tracks 64 cheaply). */
const WRITE_CHUNK = 60;

/** One write in the batched-write procedure's form (migration 0008). */
type Op = { op: 'c' | 'd'; t: string; r: string; s: string; n: string; b?: Record<string, unknown>; x?: null };

/** One batch of a restore: keys to remove first (when present), then objects to create (each replacing what is at its key). */
export interface RestoreBatch {
  remove: ObjectKey[];
  create: Array<{ key: ObjectKey; body: Record<string, unknown> }>;
}

/**
 * What tenant snapshots need of PostgreSQL beyond the Storage interface
 * (whose paged lists at a revision the export reads): which resources a
 * tenant held at a revision, which revision a point in time was, the keys a
 * tenant holds now, and restore batches written on the tenant's shard
 * with the batched-write procedure every write goes through (new
 * revisions from that shard's counter, change-log rows, usage and quota
 * counts, encryption at rest).
 */
export class TenantSnapshotRepository {
  private readonly router: ShardRouter;

  constructor(source: DatabaseSource) {
    this.router = routerOf(source);
  }

  /**
   * The storage resources in which `tenant` had an object at `revision`: those
   * it has objects of now, and those changed after `revision` (an object
   * present then and gone now left a change after it). A superset: a
   * resource may turn out empty at `revision`. Sorted.
   */
  async resourcesAt(tenant: string, revision: number): Promise<string[]> {
    const db = await tenantDb(this.router, tenant);
    const { rows } = await sql<{ resource: string }>`
      SELECT resource FROM objects WHERE tenant = ${tenant} GROUP BY resource
      UNION SELECT resource FROM changes WHERE tenant = ${tenant} AND revision > ${revision} GROUP BY resource
      ORDER BY resource
    `.execute(db);
    return rows.map((r) => r.resource);
  }

  /**
   * The newest revision of `tenant`'s shard whose change of the tenant was
   * recorded at or before `at`: the tenant's state at that time. Throws
   * StorageError Expired (naming the oldest revision kept) when the kept
   * history does not reach back to `at`.
   */
  async revisionAt(tenant: string, at: Date): Promise<number> {
    const db = await tenantDb(this.router, tenant);
    const { rows } = await sql<{ r: number | null; oldest: number | null; floor: number }>`
      SELECT (SELECT max(revision) FROM changes WHERE tenant = ${tenant} AND created_at <= ${at}) AS r,
             (SELECT min(revision) FROM changes WHERE tenant = ${tenant}) AS oldest,
             ${historyFloor(tenant)} AS floor
    `.execute(db);
    const row = rows[0];
    const oldest = Math.max(Number(row.oldest ?? row.floor), Number(row.floor));
    if (row.r === null) throw new StorageError('Expired', `the kept history of tenant ${tenant} does not reach back to ${at.toISOString()}; the oldest revision available is ${oldest}`, undefined, oldest);
    return Number(row.r);
  }

  /**
   * Checks that `revision` is within the history of the tenant now named
   * `tenant`: not below the revision it was created at (a deleted tenant
   * of the same name, re-created since, is another tenant: its history is
   * not this one's), its shard's compaction, nor the floor of a history it
   * brought when it moved. Throws StorageError Expired naming the oldest
   * revision available (and the creation when that is what stops it);
   * NotFound when the tenant does not exist. Reads only.
   */
  async checkHistory(tenant: string, revision: number): Promise<void> {
    const db = await tenantDb(this.router, tenant);
    const { rows } = await sql<{ created: number; floor: number }>`
      SELECT t.created_revision AS created, ${historyFloor(tenant)} AS floor FROM tenants t WHERE t.name = ${tenant}
    `.execute(db);
    if (rows.length === 0) throw new StorageError('NotFound', `tenant ${tenant} not found`);
    const created = Number(rows[0].created);
    const oldest = Math.max(created, Number(rows[0].floor));
    if (revision >= oldest) return;
    const why =
      revision < created
        ? `tenant ${tenant} was created at revision ${created}: revision ${revision} is before it (a deleted tenant of the same name is not its history)`
        : `revision ${revision} of tenant ${tenant} is older than the kept history`;
    throw new StorageError('Expired', `${why}; the oldest revision available is ${oldest}`, undefined, oldest);
  }

  /** Every object `tenant` holds now, as keys with labels, in key order. */
  async currentKeys(tenant: string): Promise<CurrentKey[]> {
    const db = await tenantDb(this.router, tenant);
    const { rows } = await sql<{ resource: string; namespace: string; name: string; labels: Record<string, string> | null }>`
      SELECT resource, namespace, name, body -> 'metadata' -> 'labels' AS labels FROM objects WHERE tenant = ${tenant} ORDER BY resource, namespace, name
    `.execute(db);
    return rows.map((r) => ({ tenant, resource: r.resource, namespace: r.namespace, name: r.name, labels: r.labels ?? {} }));
  }

  /**
   * Writes one restore batch of `tenant` on its shard: removes whatever
   * exists under `remove`'s and `create`'s keys (so a create replaces an
   * object a controller made meanwhile), then creates `create`'s objects
   * (bodies as given: uid, ownerReferences, finalizers, managedFields kept;
   * each gets the next revision of the shard). Written as the write
   * batcher writes (plinth_write_batch_durable: chunks of
   * {@link WRITE_CHUNK} writes, each one transaction holding the revision
   * counter once, durable when it returns), so other tenants' writes wait
   * at most one chunk. Not atomic across chunks. Returns the revision of
   * the last write. Throws StorageError (LimitExceeded, QuotaExceeded,
   * TenantTerminating...). Does not mutate the bodies.
   */
  async writeBatch(tenant: string, batch: RestoreBatch): Promise<number> {
    const shard = await this.router.dbFor(tenant);
    const db = tenantScoped(shard, tenant);
    const keys = [...batch.remove, ...batch.create.map((c) => c.key)];
    if (keys.length === 0) return 0;
    const bodies = await withDataKeys(() => batch.create.map((c) => sealBody(c.key, withoutResourceVersion(c.body))));
    const { rows } = await sql<{ resource: string; namespace: string; name: string }>`
      SELECT e.resource, e.namespace, e.name
      FROM unnest(${keys.map((k) => k.resource)}::text[], ${keys.map((k) => k.namespace)}::text[], ${keys.map((k) => k.name)}::text[]) AS k(resource, namespace, name)
      -- One primary-key lookup per key (a join could scan every row of the shard's objects).
      CROSS JOIN LATERAL (
        SELECT o.resource, o.namespace, o.name FROM objects o
        WHERE o.tenant = ${tenant} AND o.resource = k.resource AND o.namespace = k.namespace AND o.name = k.name
      ) e
    `.execute(db);
    const deletes: Op[] = rows.map((r) => ({ op: 'd', t: tenant, r: r.resource, s: r.namespace, n: r.name, x: null }));
    const creates: Op[] = batch.create.map((c, i) => ({ op: 'c', t: tenant, r: c.key.resource, s: c.key.namespace, n: c.key.name, b: bodies[i] }));
    let last = await this.run(db, deletes, true);
    const refused = new Set<number>();
    last = Math.max(last, await this.run(db, creates, false, refused));
    // A create refused because a controller made the object meanwhile: remove that one and create again, once.
    const again = [...refused].flatMap((i): Op[] => [{ op: 'd', t: tenant, r: creates[i].r, s: creates[i].s, n: creates[i].n, x: null }, creates[i]]);
    if (again.length > 0) last = Math.max(last, await this.run(db, again, true));
    return last;
  }

  /**
   * Runs `ops` in chunks with the batched-write procedure; returns the
   * highest revision written. A refused write throws (mapped to a
   * StorageError), except a delete of what is already gone when
   * `tolerateGone`, and a create of what exists when `exists` collects
   * them (by index in `ops`).
   */
  private async run(db: Kysely<DB>, ops: Op[], tolerateGone: boolean, exists?: Set<number>): Promise<number> {
    let last = 0;
    for (let i = 0; i < ops.length; i += WRITE_CHUNK) {
      const chunk = ops.slice(i, i + WRITE_CHUNK);
      const { rows } = await sql<{ results: Array<{ r?: number; e?: string; m?: string }> }>`CALL plinth_write_batch_durable(${JSON.stringify(chunk)}::jsonb, NULL)`.execute(db);
      rows[0].results.forEach((res, j) => {
        const op = chunk[j];
        if (res.e === undefined) {
          last = Math.max(last, Number(res.r));
          return;
        }
        const key = { tenant: op.t, resource: op.r, namespace: op.s, name: op.n };
        let mapped: unknown = res;
        try {
          mapWriteError(Object.assign(new Error(res.m), { code: res.e, severity: 'ERROR' }), key);
        } catch (err) {
          mapped = err;
        }
        if (mapped instanceof StorageError && mapped.code === 'NotFound' && op.op === 'd' && tolerateGone) return;
        if (mapped instanceof StorageError && mapped.code === 'AlreadyExists' && op.op === 'c' && exists) {
          exists.add(i + j);
          return;
        }
        throw mapped;
      });
    }
    return last;
  }
}
