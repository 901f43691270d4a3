import { type Kysely, sql } from 'kysely';
import type { DB, ObjectsTable } from './db.js';
import type { StoredObject } from './object-key.js';
import { withResourceVersion } from './object-key.js';
import { sweepShards } from './object-store.repository.js';
import { type DatabaseSource, routerOf, type ShardRouter, tenantDb } from './shard-router.js';
import { openBodyOrSkip } from './value/stored-body.js';

/**
 * The condition on migration 0011's hashed uid index for objects whose uid is
 * one of `uids` (callers compare the uid and tenant themselves too).
 */
function byUid(uids: string[]) {
  return sql`plinth_hash(body -> 'metadata' ->> 'uid') = ANY (ARRAY(SELECT plinth_hash(u) FROM unnest(${uids}::text[]) AS u))`;
}

/**
 * Reads for garbage collection: objects by uid (migration 0011's index),
 * dependents by the owner uid they name (migration 0007's). Encrypted
 * bodies keep uid, ownerReferences, finalizers and deletionTimestamp
 * readable, so these reads find them; an object that cannot be decrypted
 * (its key is no longer configured) is left out of what they return, since
 * the collector could not update or delete it through the API either.
 */
export class OwnerRepository {
  private readonly router: ShardRouter;

  constructor(source: DatabaseSource) {
    this.router = routerOf(source);
  }

  /** Which of `uids` belong to an object of `tenant` now. */
  async existingUids(tenant: string, uids: string[]): Promise<Set<string>> {
    if (uids.length === 0) return new Set();
    const { rows } = await sql<{ uid: string }>`
      SELECT body -> 'metadata' ->> 'uid' AS uid FROM objects
      WHERE ${byUid(uids)} AND tenant = ${tenant} AND body -> 'metadata' ->> 'uid' = ANY (${uids}::text[])
    `.execute(await tenantDb(this.router, tenant));
    return new Set(rows.map((r) => r.uid));
  }

  /** The objects of `tenant` with these uids. */
  async objectsByUid(tenant: string, uids: string[]): Promise<StoredObject[]> {
    if (uids.length === 0) return [];
    const { rows } = await sql<{ resource: string; namespace: string; name: string; revision: number; body: Record<string, unknown> }>`
      SELECT resource, namespace, name, revision, body FROM objects
      WHERE ${byUid(uids)} AND tenant = ${tenant} AND body -> 'metadata' ->> 'uid' = ANY (${uids}::text[])
    `.execute(await tenantDb(this.router, tenant));
    return toStored(rows.map((r) => ({ ...r, tenant })));
  }

  /** Up to `limit` objects of `tenant` whose ownerReferences name `ownerUid`. */
  async dependentsOf(tenant: string, ownerUid: string, limit = 500): Promise<StoredObject[]> {
    const { rows } = await sql<{ resource: string; namespace: string; name: string; revision: number; body: Record<string, unknown> }>`
      SELECT resource, namespace, name, revision, body FROM objects
      WHERE tenant = ${tenant} AND body -> 'metadata' ? 'ownerReferences'
        AND body -> 'metadata' -> 'ownerReferences' @> ${JSON.stringify([{ uid: ownerUid }])}::jsonb
      ORDER BY resource, namespace, name LIMIT ${limit}
    `.execute(await tenantDb(this.router, tenant));
    return toStored(rows.map((r) => ({ ...r, tenant })));
  }

  /**
   * Up to `limit` objects (any tenant) with an owner reference whose uid no
   * object of their tenant has: what a collector that missed a deletion
   * (a restart, a replica that died) still has to collect.
   */
  async withDanglingOwners(limit = 200): Promise<StoredObject[]> {
    return sweepShards(this.router, limit, async (db, n) => toStored((await sql<ObjectRow>`
      SELECT o.tenant, o.resource, o.namespace, o.name, o.revision, o.body FROM objects o
      WHERE o.body -> 'metadata' ? 'ownerReferences'
        AND EXISTS (
          SELECT 1 FROM jsonb_array_elements(o.body -> 'metadata' -> 'ownerReferences') r
          WHERE NOT EXISTS (
            SELECT 1 FROM objects p
            WHERE plinth_hash(p.body -> 'metadata' ->> 'uid') = plinth_hash(r ->> 'uid') AND p.tenant = o.tenant AND p.body -> 'metadata' ->> 'uid' = r ->> 'uid'
          )
        )
      LIMIT ${n}
    `.execute(db)).rows));
  }

  /**
   * Up to `limit` objects (any tenant) being deleted that still hold one of
   * `finalizers`: owners a collector that stopped mid-way (a restart, a
   * replica that died) left in Orphan or Foreground deletion.
   */
  async deletingWithFinalizers(finalizers: string[], limit = 10_000): Promise<StoredObject[]> {
    return sweepShards(this.router, limit, async (db, n) => toStored((await sql<ObjectRow>`
      SELECT tenant, resource, namespace, name, revision, body FROM objects
      WHERE body -> 'metadata' ? 'deletionTimestamp' AND body -> 'metadata' -> 'finalizers' ?| ${finalizers}::text[]
      LIMIT ${n}
    `.execute(db)).rows));
  }
}

/** A row of `objects` as the sweeps read it. */
type ObjectRow = ObjectsTable;

/** The decrypted objects of `rows`, leaving out those that cannot be decrypted. */
function toStored(rows: ObjectRow[]): StoredObject[] {
  const out: StoredObject[] = [];
  for (const r of rows) {
    const key = { tenant: r.tenant, resource: r.resource, namespace: r.namespace, name: r.name };
    const body = openBodyOrSkip(key, r.body);
    if (body) out.push({ key, revision: r.revision, body: withResourceVersion(body, r.revision) });
  }
  return out;
}
