import { type Kysely, sql } from 'kysely';
import type { DB } from './db.js';
import { mapWriteError, sweepShards } from './object-store.repository.js';
import { type DatabaseSource, routerOf, type ShardRouter, tenantDb } from './shard-router.js';

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
  private readonly router: ShardRouter;

  constructor(source: DatabaseSource) {
    this.router = routerOf(source);
  }

  /**
   * Makes the quota `name` in `namespace` count `items` from now on, with
   * the current objects counted first (under the revision counter's lock,
   * so no write slips between count and rows). Throws StorageError
   * TenantTerminating for a tenant being deleted.
   */
  async set(tenant: string, namespace: string, name: string, items: QuotaItem[]): Promise<void> {
    try {
      await sql`SELECT plinth_set_quota(${tenant}, ${namespace}, ${name}, ${items.map((i) => i.resource)}::text[], ${items.map((i) => i.hardName)}::text[], ${items.map((i) => i.max)}::bigint[])`.execute(await tenantDb(this.router, tenant));
    } catch (err) {
      mapWriteError(err, { tenant, resource: 'resourcequotas', namespace, name });
    }
  }

  /** The counts of every quota (of `tenant`, or of all tenants on every readable shard), keyed `tenant/namespace/quota`. */
  async used(tenant?: string): Promise<Map<string, QuotaUsed>> {
    const read = (db: Kysely<DB>) => {
      const q = db.selectFrom('quota_usage').select(['tenant', 'namespace', 'quota', 'hard_name', 'objects']);
      return (tenant === undefined ? q : q.where('tenant', '=', tenant)).execute();
    };
    const rows = tenant !== undefined ? await read(await tenantDb(this.router, tenant)) : await sweepShards(this.router, Number.MAX_SAFE_INTEGER, read);
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
