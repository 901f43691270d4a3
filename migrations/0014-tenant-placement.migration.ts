import { type Kysely, sql } from 'kysely';

/**
 * What a shard records of the tenants that live on it, for live moves
 * between shards (each shard is its own PostgreSQL database with its own
 * revision counter):
 *
 * - `fenced`: a move is switching the tenant to another shard. Every write
 *   function refuses it with SQLSTATE P0423 (as a Terminating tenant gets
 *   P0403), and fencing takes the revision counter's lock first, as marking
 *   a tenant Terminating does: when the fence commits, every write of the
 *   tenant that could still commit here has committed, and none can follow.
 * - `arrived_revision`: the revision from which this shard holds the
 *   tenant's changes as they happen. Below it, its change log holds copies
 *   of the tenant's history brought from the shard it left (same
 *   revisions, to serve watches and lists that resume from them). Copies
 *   are not new changes: the relay's read of the log
 *   (ChangeLogRepository.changesAfter) skips them, so the relay
 *   never publishes them to the watch cache. While a tenant is being
 *   copied in, it is the largest bigint.
 * - `history_floor`: the oldest revision of the tenant's copied history:
 *   watches and lists from below it are answered 410 Expired, whatever the
 *   shard's own compaction reached.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE tenants
      ADD COLUMN fenced boolean NOT NULL DEFAULT false,
      ADD COLUMN arrived_revision bigint NOT NULL DEFAULT 0,
      ADD COLUMN history_floor bigint NOT NULL DEFAULT 0;

    CREATE OR REPLACE FUNCTION plinth_check_tenant(p_tenant text) RETURNS void LANGUAGE plpgsql AS $fn$
    DECLARE t tenants%ROWTYPE;
    BEGIN
      SELECT * INTO t FROM tenants WHERE name = p_tenant;
      IF NOT FOUND OR t.phase <> 'Active' THEN
        RAISE EXCEPTION USING ERRCODE = 'P0403', MESSAGE = 'tenant is not active';
      END IF;
      IF t.fenced THEN
        RAISE EXCEPTION USING ERRCODE = 'P0423', MESSAGE = 'tenant is moving to another shard';
      END IF;
    END $fn$;

    -- Fences (or unfences) a tenant's writes under the revision counter's lock. Returns the newest
    -- revision, which no write of the tenant on this shard can exceed while it stays fenced;
    -- NULL when the tenant does not live here.
    CREATE FUNCTION plinth_fence_tenant(p_tenant text, p_fenced boolean) RETURNS bigint LANGUAGE plpgsql AS $fn$
    DECLARE r bigint;
    BEGIN
      SELECT value INTO r FROM revision_counter WHERE id = 1 FOR UPDATE;
      UPDATE tenants SET fenced = p_fenced WHERE name = p_tenant;
      IF NOT FOUND THEN RETURN NULL; END IF;
      RETURN r;
    END $fn$;
  `.execute(db);
}

/** Restores migration 0002's tenant check and drops the placement columns. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP FUNCTION plinth_fence_tenant(text, boolean);
    CREATE OR REPLACE FUNCTION plinth_check_tenant(p_tenant text) RETURNS void LANGUAGE plpgsql AS $fn$
    BEGIN
      IF NOT EXISTS (SELECT 1 FROM tenants t WHERE t.name = p_tenant AND t.phase = 'Active') THEN
        RAISE EXCEPTION USING ERRCODE = 'P0403', MESSAGE = 'tenant is not active';
      END IF;
    END $fn$;
    ALTER TABLE tenants DROP COLUMN fenced, DROP COLUMN arrived_revision, DROP COLUMN history_floor;
  `.execute(db);
}
