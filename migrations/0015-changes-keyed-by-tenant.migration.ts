import { type Kysely, sql } from 'kysely';

/**
 * The change log keyed by tenant first: `(tenant, revision)` instead of
 * `revision` alone.
 *
 * A revision is unique within one shard's own writes, but a tenant moved
 * to a shard brings copies of its history with the revisions of the shard
 * it left (migration 0014), which may equal revisions this shard gave its
 * own tenants. Keyed by tenant first, both coexist; it is also the key a
 * Citus cluster would distribute the table by (every tenant table leads
 * its primary key with the tenant). The relay still reads the log in
 * revision order through a plain index on `revision`.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE changes DROP CONSTRAINT changes_pkey;
    ALTER TABLE changes ADD PRIMARY KEY (tenant, revision);
    CREATE INDEX changes_revision_idx ON changes (revision);
  `.execute(db);
}

/** Back to `revision` as the key (fails if copies of a moved tenant's history share a revision with this shard's own). */
export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP INDEX changes_revision_idx;
    ALTER TABLE changes DROP CONSTRAINT changes_pkey;
    ALTER TABLE changes ADD PRIMARY KEY (revision);
  `.execute(db);
}
