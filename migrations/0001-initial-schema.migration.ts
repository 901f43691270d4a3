import { type Kysely, sql } from 'kysely';

/**
 * The initial schema: tenants, the revision counter, current objects, the
 * change log, the compaction watermark, and the write functions.
 *
 * Revisions are allocated in commit order: every write bumps the single
 * counter row as its last data statement, so the row lock is held only from
 * there through COMMIT. A transaction that rolls back also rolls back its
 * bump, so committed revisions are contiguous: no gaps, no placeholder rows.
 * Locks are always taken object row first, counter second, so writers never
 * deadlock.
 *
 * Group commit: holding the counter through a synchronous COMMIT would make
 * every write wait for the previous one's WAL flush. So each write function
 * commits asynchronously (synchronous_commit off for its own transaction
 * only), which releases the counter as soon as the commit is visible, and the
 * caller then calls plinth_flush(), a synchronous no-op commit whose WAL
 * flush covers the write's commit record. Concurrent flushes share one fsync.
 * A write is acknowledged only after plinth_flush() returns, and readers that
 * might see unflushed commits call it too (see the repositories).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE tenants (
      name text COLLATE "C" PRIMARY KEY,
      uid uuid NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    );
    INSERT INTO tenants (name, uid) VALUES ('default', gen_random_uuid());

    CREATE TABLE revision_counter (
      id smallint PRIMARY KEY CHECK (id = 1),
      value bigint NOT NULL
    );
    INSERT INTO revision_counter (id, value) VALUES (1, 1);

    CREATE TABLE compaction_state (
      id smallint PRIMARY KEY CHECK (id = 1),
      compacted_revision bigint NOT NULL
    );
    INSERT INTO compaction_state (id, compacted_revision) VALUES (1, 1);

    CREATE TABLE objects (
      tenant text COLLATE "C" NOT NULL,
      resource text COLLATE "C" NOT NULL,
      namespace text COLLATE "C" NOT NULL,
      name text COLLATE "C" NOT NULL,
      revision bigint NOT NULL,
      body jsonb NOT NULL,
      labels jsonb GENERATED ALWAYS AS (coalesce(body -> 'metadata' -> 'labels', '{}'::jsonb)) STORED,
      PRIMARY KEY (tenant, resource, namespace, name)
    );
    CREATE INDEX objects_labels_idx ON objects USING gin (labels);
    CREATE INDEX objects_cluster_list_idx ON objects (tenant, resource, name, namespace);

    CREATE TABLE changes (
      revision bigint PRIMARY KEY,
      tenant text COLLATE "C" NOT NULL,
      resource text COLLATE "C" NOT NULL,
      namespace text COLLATE "C" NOT NULL,
      name text COLLATE "C" NOT NULL,
      type char(1) NOT NULL,
      object jsonb NOT NULL,
      prev_object jsonb,
      prev_revision bigint,
      created_at timestamptz NOT NULL DEFAULT clock_timestamp()
    );
    CREATE INDEX changes_key_idx ON changes (tenant, resource, namespace, name, revision);
  `.execute(db);

  await sql`
    -- A durability barrier: a synchronously committed transaction that writes
    -- one WAL record, so its commit flushes all WAL before it, including the
    -- asynchronous commits of earlier writes. Call it in autocommit mode.
    CREATE FUNCTION plinth_flush() RETURNS void LANGUAGE sql AS $fn$
      SELECT pg_logical_emit_message(true, 'plinth', '')
    $fn$;

    CREATE FUNCTION plinth_next_revision() RETURNS bigint LANGUAGE sql AS $fn$
      UPDATE revision_counter SET value = value + 1 WHERE id = 1 RETURNING value
    $fn$;

    -- Create: the counter is taken first. Only creates insert keys, and a
    -- create holds the counter before inserting, so no other transaction can
    -- hold an uncommitted insert of the same key while waiting on the counter.
    -- Returns NULL when the key exists.
    CREATE FUNCTION plinth_create(p_tenant text, p_resource text, p_namespace text, p_name text, p_body jsonb)
    RETURNS bigint LANGUAGE plpgsql AS $fn$
    DECLARE r bigint;
    BEGIN
      PERFORM set_config('synchronous_commit', 'off', true);
      r := plinth_next_revision();
      INSERT INTO objects (tenant, resource, namespace, name, revision, body)
        VALUES (p_tenant, p_resource, p_namespace, p_name, r, p_body)
        ON CONFLICT DO NOTHING;
      IF NOT FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'P0409', MESSAGE = 'already exists';
      END IF;
      INSERT INTO changes (revision, tenant, resource, namespace, name, type, object)
        VALUES (r, p_tenant, p_resource, p_namespace, p_name, 'A', p_body);
      PERFORM pg_notify('plinth_changes', r::text);
      RETURN r;
    END $fn$;

    -- Locks the current row (FOR UPDATE) and returns it; raises P0404 when it is
    -- missing and P0412 when p_expected is set and differs from its revision.
    CREATE FUNCTION plinth_lock_current(p_tenant text, p_resource text, p_namespace text, p_name text, p_expected bigint,
                                        OUT body jsonb, OUT revision bigint)
    LANGUAGE plpgsql AS $fn$
    BEGIN
      SELECT o.body, o.revision INTO body, revision FROM objects o
        WHERE o.tenant = p_tenant AND o.resource = p_resource AND o.namespace = p_namespace AND o.name = p_name
        FOR UPDATE;
      IF NOT FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'P0404', MESSAGE = 'not found';
      END IF;
      IF p_expected IS NOT NULL AND revision <> p_expected THEN
        RAISE EXCEPTION USING ERRCODE = 'P0412', MESSAGE = 'revision mismatch';
      END IF;
    END $fn$;

    -- Update: lock the row, check the expected revision, then take the counter.
    CREATE FUNCTION plinth_update(p_tenant text, p_resource text, p_namespace text, p_name text, p_body jsonb, p_expected bigint)
    RETURNS bigint LANGUAGE plpgsql AS $fn$
    DECLARE r bigint; old_body jsonb; old_rev bigint;
    BEGIN
      PERFORM set_config('synchronous_commit', 'off', true);
      SELECT l.body, l.revision INTO old_body, old_rev FROM plinth_lock_current(p_tenant, p_resource, p_namespace, p_name, p_expected) l;
      r := plinth_next_revision();
      UPDATE objects SET body = p_body, revision = r
        WHERE tenant = p_tenant AND resource = p_resource AND namespace = p_namespace AND name = p_name;
      INSERT INTO changes (revision, tenant, resource, namespace, name, type, object, prev_object, prev_revision)
        VALUES (r, p_tenant, p_resource, p_namespace, p_name, 'M', p_body, old_body, old_rev);
      PERFORM pg_notify('plinth_changes', r::text);
      RETURN r;
    END $fn$;

    -- Delete: like update; the DELETED change carries the last state.
    CREATE FUNCTION plinth_delete(p_tenant text, p_resource text, p_namespace text, p_name text, p_expected bigint)
    RETURNS TABLE (revision bigint, body jsonb) LANGUAGE plpgsql AS $fn$
    DECLARE r bigint; old_body jsonb; old_rev bigint;
    BEGIN
      PERFORM set_config('synchronous_commit', 'off', true);
      SELECT l.body, l.revision INTO old_body, old_rev FROM plinth_lock_current(p_tenant, p_resource, p_namespace, p_name, p_expected) l;
      r := plinth_next_revision();
      DELETE FROM objects o
        WHERE o.tenant = p_tenant AND o.resource = p_resource AND o.namespace = p_namespace AND o.name = p_name;
      INSERT INTO changes (revision, tenant, resource, namespace, name, type, object, prev_object, prev_revision)
        VALUES (r, p_tenant, p_resource, p_namespace, p_name, 'D', old_body, old_body, old_rev);
      PERFORM pg_notify('plinth_changes', r::text);
      RETURN QUERY SELECT r, old_body;
    END $fn$;

    -- The same writes as one round trip each: the write commits (asynchronously,
    -- releasing the counter), then the barrier commits synchronously. Only for
    -- autocommit callers; inside a transaction block CALL cannot COMMIT.
    CREATE PROCEDURE plinth_create_durable(p_tenant text, p_resource text, p_namespace text, p_name text, p_body jsonb, INOUT r bigint)
    LANGUAGE plpgsql AS $fn$
    BEGIN
      r := plinth_create(p_tenant, p_resource, p_namespace, p_name, p_body);
      COMMIT;
      PERFORM plinth_flush();
    END $fn$;

    CREATE PROCEDURE plinth_update_durable(p_tenant text, p_resource text, p_namespace text, p_name text, p_body jsonb, p_expected bigint, INOUT r bigint)
    LANGUAGE plpgsql AS $fn$
    BEGIN
      r := plinth_update(p_tenant, p_resource, p_namespace, p_name, p_body, p_expected);
      COMMIT;
      PERFORM plinth_flush();
    END $fn$;

    CREATE PROCEDURE plinth_delete_durable(p_tenant text, p_resource text, p_namespace text, p_name text, p_expected bigint, INOUT r bigint, INOUT b jsonb)
    LANGUAGE plpgsql AS $fn$
    BEGIN
      SELECT d.revision, d.body INTO r, b FROM plinth_delete(p_tenant, p_resource, p_namespace, p_name, p_expected) d;
      COMMIT;
      PERFORM plinth_flush();
    END $fn$;
  `.execute(db);
}

/** Drops everything `up` created. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP PROCEDURE plinth_delete_durable; DROP PROCEDURE plinth_update_durable; DROP PROCEDURE plinth_create_durable;
    DROP FUNCTION plinth_delete; DROP FUNCTION plinth_update; DROP FUNCTION plinth_lock_current; DROP FUNCTION plinth_create; DROP FUNCTION plinth_next_revision; DROP FUNCTION plinth_flush;
    DROP TABLE changes; DROP TABLE objects; DROP TABLE compaction_state; DROP TABLE revision_counter; DROP TABLE tenants;
  `.execute(db);
}
