import { type Kysely, sql } from 'kysely';

/**
 * Marks of when a shard's revisions were reached: every so often the Event
 * TTL controller records (now, the revision counter's value) on each shard.
 * An object's row carries only its revision, not the time of its last
 * write; with these marks, "last written before T" is "revision at most the
 * newest mark taken at or before T", which the Event TTL needs (upstream
 * keeps an Event for --event-ttl after its last write). A handful of rows:
 * marks older than the one in use are removed as they are passed.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE revision_marks (
      at timestamptz PRIMARY KEY,
      revision bigint NOT NULL
    );
    INSERT INTO revision_marks (at, revision) SELECT now(), value FROM revision_counter;
  `.execute(db);
}

/** Drops the marks. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE revision_marks`.execute(db);
}
