import { type Kysely, sql } from 'kysely';

/**
 * Watch catch-up in one namespace reads that namespace's changes as an index
 * range in revision order. Without it the planner could only filter
 * changes_scope_idx by namespace, or read every later change of the
 * namespace from changes_key_idx (ordered by name) and sort them for every
 * batch; it picked the latter whenever its statistics had not yet seen a
 * burst of new changes, which made a long catch-up quadratic.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`CREATE INDEX changes_namespace_idx ON changes (tenant, resource, namespace, revision)`.execute(db);
}

/** Drops the index. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP INDEX changes_namespace_idx`.execute(db);
}
