import { type Kysely, sql } from 'kysely';

/**
 * The state of the encryption rotation job on this shard (one row): the
 * configuration it rotates to (`target`, the `sha256:` hash of the
 * EncryptionConfiguration file), its phase (`objects`, then `changes`,
 * then `done`), the cursor it has reached in that phase (the primary key
 * of the last row it checked: `objects` by (tenant, resource, namespace,
 * name), `changes` by (tenant, revision)) and its counts. The job saves
 * the cursor after every batch, so a job stopped mid-way (a restart, a
 * leader that died) continues from it rather than from the start.
 * `requested`: the value of the Shard's `encryption.plinth.dev/rotate`
 * annotation when the pass began (a new value asks for another pass). Each
 * shard is its own database, so each has its own row.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE encryption_rotation (
      id smallint PRIMARY KEY CHECK (id = 1),
      target text NOT NULL,
      requested text,
      phase text NOT NULL CHECK (phase IN ('objects', 'changes', 'done')),
      cursor_tenant text COLLATE "C",
      cursor_resource text COLLATE "C",
      cursor_namespace text COLLATE "C",
      cursor_name text COLLATE "C",
      cursor_revision bigint,
      checked bigint NOT NULL DEFAULT 0,
      rewritten bigint NOT NULL DEFAULT 0,
      failed bigint NOT NULL DEFAULT 0,
      started_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      finished_at timestamptz
    );
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE encryption_rotation`.execute(db);
}
