import { type Kysely, sql } from 'kysely';

/**
 * Current objects lose what they stored twice or indexed by long text:
 *
 * - `labels`, a stored generated copy of `body -> metadata -> labels`, is
 *   dropped; the GIN index that label selectors use now indexes that
 *   expression of the body itself (readers use the same expression, see
 *   ObjectListRepository), so selection is unchanged and each row is its
 *   labels' size smaller.
 * - `objects_cluster_list_idx (tenant, resource, name, namespace)`, which
 *   served a list selecting one name across namespaces, held the full text
 *   key again (about 140 bytes an entry); `objects_name_hash_idx` keys the
 *   same lookup on `plinth_hash(tenant, resource, name)` (migration 0010),
 *   and readers recheck the columns. Key-ordered reads use the primary key,
 *   as they did.
 * - `objects_uid_idx (tenant, uid text)`, for garbage collection, becomes
 *   `plinth_hash(uid)`; readers recheck tenant and uid.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE INDEX objects_body_labels_idx ON objects USING gin ((coalesce(body -> 'metadata' -> 'labels', '{}'::jsonb)));
    ALTER TABLE objects DROP COLUMN labels;
    CREATE INDEX objects_name_hash_idx ON objects (plinth_hash(tenant, resource, name));
    DROP INDEX objects_cluster_list_idx;
    CREATE INDEX objects_uid_hash_idx ON objects (plinth_hash(body -> 'metadata' ->> 'uid'));
    DROP INDEX objects_uid_idx;
  `.execute(db);
}

/** Back to 0010's objects table: the stored labels column and the text indexes. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE objects ADD COLUMN labels jsonb GENERATED ALWAYS AS (coalesce(body -> 'metadata' -> 'labels', '{}'::jsonb)) STORED;
    CREATE INDEX objects_labels_idx ON objects USING gin (labels);
    DROP INDEX objects_body_labels_idx;
    CREATE INDEX objects_cluster_list_idx ON objects (tenant, resource, name, namespace);
    DROP INDEX objects_name_hash_idx;
    CREATE INDEX objects_uid_idx ON objects (tenant, (body -> 'metadata' ->> 'uid'));
    DROP INDEX objects_uid_hash_idx;
  `.execute(db);
}
