import { type Kysely, sql } from 'kysely';
import type { DB } from './db.js';
import { mapWriteError } from './object-store.repository.js';

/** One counted resource of a ResourceQuota: its storage resource, its name in `spec.hard`, its hard limit. */
export interface QuotaItem {
  resource: string;
  hardName: string;
  max: number;
}

/** What a quota has counted: per `spec.hard` name, the objects now. */
export type QuotaUsed = Record<string, number>;

/**
 * ResourceQuota object counts (migration 0006): the rows every create and
 * delete in a namespace keeps, and their (re)building when a quota is
 * created or changed.
 */
export class QuotaRepository {
  constructor(private readonly db: Kysely<DB>) {}

  /**
   * Makes the quota `name` in `namespace` count `items` from now on, with
   * the current objects counted first (under the revision counter's lock,
   * so no write slips between count and rows). Throws StorageError
   * TenantTerminating for a tenant being deleted.
   */
  async set(tenant: string, namespace: string, name: string, items: QuotaItem[]): Promise<void> {
    try {
      await sql`SELECT plinth_set_quota(${tenant}, ${namespace}, ${name}, ${items.map((i) => i.resource)}::text[], ${items.map((i) => i.hardName)}::text[], ${items.map((i) => i.max)}::bigint[])`.execute(this.db);
    } catch (err) {
      mapWriteError(err, { tenant, resource: 'resourcequotas', namespace, name });
    }
  }

  /** The counts of every quota (of `tenant`, or of all tenants), keyed `tenant/namespace/quota`. */
  async used(tenant?: string): Promise<Map<string, QuotaUsed>> {
    let q = this.db.selectFrom('quota_usage').select(['tenant', 'namespace', 'quota', 'hard_name', 'objects']);
    if (tenant !== undefined) q = q.where('tenant', '=', tenant);
    const rows = await q.execute();
    const out = new Map<string, QuotaUsed>();
    for (const r of rows) {
      const key = `${r.tenant}/${r.namespace}/${r.quota}`;
      const used = out.get(key) ?? {};
      used[r.hard_name] = Number(r.objects);
      out.set(key, used);
    }
    return out;
  }
}
