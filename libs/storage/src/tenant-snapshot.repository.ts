import { sql } from 'kysely';
import type { ObjectKey } from './object-key.js';
import { withoutResourceVersion } from './object-key.js';
import { mapWriteError, type ObjectStoreRepository } from './object-store.repository.js';
import { sealBody } from './value/stored-body.js';
import { withDataKeys } from './value/value-transformer.js';
import { type DatabaseSource, routerOf, type ShardRouter, tenantDb } from './shard-router.js';
import { StorageError } from './storage-error.js';

/** A current object of a tenant as the emptiness check of a restore sees it: its key and labels (labels stay readable when encrypted). */
export interface CurrentKey extends ObjectKey {
  labels: Record<string, string>;
}

/** One batch of a restore: keys to remove first (when present), then objects to create (each replacing what is at its key). */
export interface RestoreBatch {
  remove: ObjectKey[];
  create: Array<{ key: ObjectKey; body: Record<string, unknown> }>;
}

/**
 * What tenant snapshots need of PostgreSQL beyond the Storage interface
 * (whose paged lists at a revision the export reads): which resources a
 * tenant held at a revision, which revision a point in time was, the keys a
 * tenant holds now, and restore batches written in one transaction each on
 * the tenant's shard through the object repository's own write functions
 * (new revisions from that shard's counter, change-log rows, usage and
 * quota counts, encryption at rest).
 */
export class TenantSnapshotRepository {
  private readonly router: ShardRouter;

  constructor(
    source: DatabaseSource,
    private readonly objects: ObjectStoreRepository,
  ) {
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
             greatest((SELECT compacted_revision FROM compaction_state), coalesce((SELECT history_floor FROM tenants WHERE name = ${tenant}), 0)) AS floor
    `.execute(db);
    const row = rows[0];
    const oldest = Math.max(Number(row.oldest ?? row.floor), Number(row.floor));
    if (row.r === null) throw new StorageError('Expired', `the kept history of tenant ${tenant} does not reach back to ${at.toISOString()}; the oldest revision available is ${oldest}`, undefined, oldest);
    return Number(row.r);
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
   * Writes one restore batch of `tenant` in one transaction on its shard:
   * removes whatever exists under `remove`'s and `create`'s keys (so a
   * create replaces an object a controller made meanwhile), then creates
   * `create`'s objects (bodies as given: uid, ownerReferences, finalizers,
   * managedFields kept; each gets the next revision of the shard). All or
   * nothing; returns the revision of the last write, once durable. Throws
   * StorageError (LimitExceeded, QuotaExceeded, TenantTerminating...).
   * Does not mutate the bodies.
   */
  async writeBatch(tenant: string, batch: RestoreBatch): Promise<number> {
    const db = await this.router.dbFor(tenant);
    const keys = [...batch.remove, ...batch.create.map((c) => c.key)];
    if (keys.length === 0) return 0;
    const bodies = await withDataKeys(() => batch.create.map((c) => JSON.stringify(sealBody(c.key, withoutResourceVersion(c.body)))));
    let last = 0;
    try {
      await db.transaction().execute(async (tx) => {
        // One statement each: deleting what exists under the keys (only existing rows: a refused write would abort
        // the transaction), then creating every object with the objects' own write function, in the batch's order.
        const removed = await sql<{ r: string }>`
          SELECT d.revision AS r FROM (
            SELECT e.resource, e.namespace, e.name
            FROM unnest(${keys.map((k) => k.resource)}::text[], ${keys.map((k) => k.namespace)}::text[], ${keys.map((k) => k.name)}::text[]) AS k(resource, namespace, name)
            -- One primary-key lookup per key (a join could scan every row of the shard's objects).
            CROSS JOIN LATERAL (
              SELECT o.resource, o.namespace, o.name FROM objects o
              WHERE o.tenant = ${tenant} AND o.resource = k.resource AND o.namespace = k.namespace AND o.name = k.name FOR UPDATE
            ) e
          ) e CROSS JOIN LATERAL plinth_delete(${tenant}, e.resource, e.namespace, e.name, NULL::bigint) d
        `.execute(tx);
        for (const row of removed.rows) last = Math.max(last, Number(row.r));
        if (batch.create.length === 0) return;
        const created = await sql<{ r: string }>`
          SELECT plinth_create(${tenant}, c.resource, c.namespace, c.name, c.body) AS r
          FROM unnest(${batch.create.map((c) => c.key.resource)}::text[], ${batch.create.map((c) => c.key.namespace)}::text[], ${batch.create.map((c) => c.key.name)}::text[], ${bodies}::jsonb[])
            WITH ORDINALITY AS c(resource, namespace, name, body, i)
          ORDER BY c.i
        `.execute(tx);
        for (const row of created.rows) last = Math.max(last, Number(row.r));
      });
    } catch (err) {
      mapWriteError(err, keys[0]);
    }
    await this.objects.ensureDurable(tenant);
    return last;
  }
}
