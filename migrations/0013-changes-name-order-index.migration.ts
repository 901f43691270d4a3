import { type Kysely, sql } from 'kysely';

/**
 * A name-ordered index of the change log, for pages of a list at a past
 * revision after heavy churn.
 *
 * A page at revision R takes the keys changed after R from the change log
 * (the state at R of each is the `prev_object` of its first later change).
 * The log's indexes were ordered by revision only, so a page had to read
 * every change of the namespace after R and sort them by name: 63 ms for
 * 100,000 changes, on every continue page of a list whose snapshot then
 * churned. This index orders a resource's changes by (namespace, name,
 * revision): a page reads it from its cursor, the in-index condition
 * `revision > R` skips each key's older changes without reading their rows,
 * and the scan stops after the page's keys (see ObjectListRepository).
 *
 * It leads with a 64-bit hash of (tenant, resource), as migration 0010's
 * indexes do (readers compare the columns too), and serves lists within one
 * namespace and across namespaces alike. Each change costs one more index
 * entry (about 40–60 bytes with a short name).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE FUNCTION plinth_hash(a text, b text) RETURNS bigint LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $fn$
      SELECT hashtextextended(a || '/' || b, 0)
    $fn$;
    CREATE INDEX changes_name_order_idx ON changes (plinth_hash(tenant, resource), namespace, name, revision);
  `.execute(db);
}

/** Drops the index and its hash function. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP INDEX changes_name_order_idx;
    DROP FUNCTION plinth_hash(text, text);
  `.execute(db);
}
