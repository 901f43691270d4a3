import { type Kysely, sql } from 'kysely';

/**
 * Fencing of tenant moves, and whose row a tenant's row is.
 *
 * - `move_epoch`: the generation of the move (or of the sweep or deletion)
 *   that last took this shard's row of the tenant over. A mover takes the
 *   row over by raising it to its own generation (`status.moveGeneration`
 *   of the Tenant, raised first, by compare-and-swap), and every later step
 *   of that mover on this shard runs {@link plinth_move_step} in the same
 *   transaction as its write: once a newer mover (or a deletion) has raised
 *   the epoch, a stale mover's step fails with SQLSTATE P0409 and changes
 *   nothing. The check holds the row FOR SHARE, so a take-over (an UPDATE
 *   of the row) waits for a step in flight and every later step sees it.
 * - `object_uid`: the uid of the Tenant object the row was created for
 *   (NULL for rows from before this migration). Creating a Tenant never
 *   adopts a row made for another Tenant object of the same name: it waits
 *   until that row is removed (by its deletion, or by the leftover sweep).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE tenants
      ADD COLUMN move_epoch bigint NOT NULL DEFAULT 0,
      ADD COLUMN object_uid text;

    CREATE FUNCTION plinth_move_step(p_tenant text, p_epoch bigint) RETURNS void LANGUAGE plpgsql AS $fn$
    BEGIN
      PERFORM 1 FROM tenants WHERE name = p_tenant AND move_epoch = p_epoch FOR SHARE;
      IF NOT FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'P0409', MESSAGE = format('tenant %s was taken over by a newer move, sweep or deletion (this step is of generation %s)', p_tenant, p_epoch);
      END IF;
    END $fn$;
  `.execute(db);
}

/** Drops the step check and the columns. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP FUNCTION plinth_move_step(text, bigint);
    ALTER TABLE tenants DROP COLUMN move_epoch, DROP COLUMN object_uid;
  `.execute(db);
}
