import { type Kysely, sql } from 'kysely';

/**
 * Garbage collection looks objects up by uid and dependents up by the uid
 * their ownerReferences name: an expression index for each.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE INDEX objects_uid_idx ON objects (tenant, (body -> 'metadata' ->> 'uid'));
    CREATE INDEX objects_owner_refs_idx ON objects USING gin ((body -> 'metadata' -> 'ownerReferences') jsonb_path_ops)
      WHERE body -> 'metadata' ? 'ownerReferences';
  `.execute(db);
}

/** Drops both indexes. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP INDEX objects_owner_refs_idx; DROP INDEX objects_uid_idx;`.execute(db);
}
