import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { DB } from './db.js';

/** Tenants (logical clusters). */
export class TenantRepository {
  constructor(private readonly db: Kysely<DB>) {}

  /** True when the tenant exists. */
  async exists(name: string): Promise<boolean> {
    const row = await this.db.selectFrom('tenants').select('name').where('name', '=', name).executeTakeFirst();
    return row !== undefined;
  }

  /** Creates the tenant if missing; returns true when it was created. Idempotent. */
  async ensure(name: string): Promise<boolean> {
    const res = await this.db
      .insertInto('tenants')
      .values({ name, uid: randomUUID() })
      .onConflict((oc) => oc.column('name').doNothing())
      .executeTakeFirst();
    return Number(res.numInsertedOrUpdatedRows ?? 0) > 0;
  }

  /** All tenant names, sorted. */
  async list(): Promise<string[]> {
    const rows = await this.db.selectFrom('tenants').select('name').orderBy('name').execute();
    return rows.map((r) => r.name);
  }
}
