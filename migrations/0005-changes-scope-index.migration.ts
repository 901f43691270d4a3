import { type Kysely, sql } from 'kysely';

/**
 * Watch catch-up reads only its own tenant and resource: the changes of one
 * (tenant, resource) in revision order are an index range, instead of every
 * change of every tenant filtered in JavaScript.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`CREATE INDEX changes_scope_idx ON changes (tenant, resource, revision)`.execute(db);
}

/** Drops the index. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP INDEX changes_scope_idx`.execute(db);
}
