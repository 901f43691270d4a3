import { type Kysely, sql } from 'kysely';

/**
 * No revision handed out twice across a failover (issue 41).
 *
 * With asynchronous replication a promoted standby may lack the last
 * commits of the old primary, and with them the last values of
 * `revision_counter`: writing on, it would hand out revisions clients
 * already hold for other contents. Two guards, both checked by a trigger on
 * every update of the counter (once per write batch):
 *
 * - `revision_epochs`: one row per PostgreSQL timeline that may serve
 *   writes. A promotion starts a new timeline; until a Plinth replica has
 *   fenced it (raised the counter past every revision handed out before,
 *   libs/storage/src/revision-fence.ts, and recorded the row), the counter
 *   cannot move: writes fail with SQLSTATE `PLRF1` (a 503). The row keeps
 *   the revisions the new history does not contain: (`counter_found`,
 *   `raised_to`), so that a watch or list from one of them is 410 Expired.
 * - `revision_counter.ceiling`: when set, the counter may not pass it
 *   (`PLRF2`). Replicas raise it ahead of the counter only after recording
 *   the new ceiling where a failover of this database cannot lose it (Redis,
 *   see revision-fence.ts), so every revision ever committed on any primary
 *   is below a recorded ceiling, the bound a fence raises the counter to.
 *
 * The timeline is read from the current WAL file name (the first 8 hex
 * digits): exact from the moment of promotion, unlike the checkpoint's.
 * The migration records the timeline it runs on, with no gap.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE revision_counter ADD COLUMN ceiling bigint;

    CREATE TABLE revision_epochs (
      timeline integer PRIMARY KEY,
      system_identifier text NOT NULL,
      counter_found bigint NOT NULL,
      raised_to bigint NOT NULL,
      fenced_at timestamptz NOT NULL DEFAULT now()
    );

    CREATE FUNCTION plinth_timeline() RETURNS integer LANGUAGE sql VOLATILE AS $$
      SELECT ('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::integer
    $$;

    CREATE FUNCTION plinth_revision_guard() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF NEW.ceiling IS NOT NULL AND NEW.value > NEW.ceiling THEN
        RAISE EXCEPTION 'revision % is past the reserved ceiling %: the reservation could not be extended; retry', NEW.value, NEW.ceiling
          USING ERRCODE = 'PLRF2';
      END IF;
      IF NEW.value > OLD.value AND NOT EXISTS (SELECT 1 FROM revision_epochs WHERE timeline = plinth_timeline()) THEN
        RAISE EXCEPTION 'this primary (timeline %) has not been fenced after a failover yet; retry', plinth_timeline()
          USING ERRCODE = 'PLRF1';
      END IF;
      RETURN NEW;
    END
    $$;

    -- The end of the gap of this history containing revision r (a lost revision), or NULL.
    CREATE FUNCTION plinth_history_gap(r bigint) RETURNS bigint LANGUAGE sql STABLE AS $$
      SELECT max(raised_to) FROM revision_epochs WHERE r > counter_found AND r < raised_to
    $$;

    CREATE TRIGGER revision_guard BEFORE UPDATE ON revision_counter FOR EACH ROW EXECUTE FUNCTION plinth_revision_guard();

    INSERT INTO revision_epochs (timeline, system_identifier, counter_found, raised_to)
      SELECT plinth_timeline(), (SELECT system_identifier::text FROM pg_control_system()), value, value FROM revision_counter WHERE id = 1;
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP TRIGGER revision_guard ON revision_counter;
    DROP FUNCTION plinth_revision_guard();
    DROP FUNCTION plinth_history_gap(bigint);
    DROP FUNCTION plinth_timeline();
    DROP TABLE revision_epochs;
    ALTER TABLE revision_counter DROP COLUMN ceiling;
  `.execute(db);
}
