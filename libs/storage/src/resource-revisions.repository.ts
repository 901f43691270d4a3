import { type Kysely, sql } from 'kysely';
import type { DB } from './db.js';

/** How many objects of one resource a tenant has, and the newest revision among them. */
export interface ResourceRevisionSummary {
  count: number;
  maxRevision: number;
}

/**
 * Cheap change detection for one resource across tenants: the pair
 * (count, newest revision) of a tenant's objects changes on every create,
 * update and delete of that resource, so pollers (the CRD cache) compare
 * it instead of reading whole objects.
 */
export class ResourceRevisionsRepository {
  constructor(private readonly db: Kysely<DB>) {}

  /**
   * The summary of `resource` for each of `tenants` (tenants without such
   * objects are absent from the map). Uses the (tenant, resource, …) index.
   */
  async summaries(resource: string, tenants: string[]): Promise<Map<string, ResourceRevisionSummary>> {
    const out = new Map<string, ResourceRevisionSummary>();
    if (tenants.length === 0) return out;
    const { rows } = await sql<{ tenant: string; n: number; top: number }>`
      SELECT tenant, count(*)::int AS n, max(revision) AS top
      FROM objects
      WHERE tenant = ANY(${tenants}::text[]) AND resource = ${resource}
      GROUP BY tenant
    `.execute(this.db);
    for (const r of rows) out.set(r.tenant, { count: Number(r.n), maxRevision: Number(r.top) });
    return out;
  }
}
