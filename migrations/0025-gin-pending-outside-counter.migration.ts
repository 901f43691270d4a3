import { type Kysely, sql } from 'kysely';

/** The GIN indexes whose pending lists writers never clean themselves (see `up`). */
export const DEFERRED_GIN_INDEXES = ['objects_labels_idx', 'changes_labels_idx', 'objects_owner_refs_idx'] as const;

/**
 * Label index work out of the revision counter's critical section (issue 46).
 *
 * A write holds the shard's revision counter from the moment it takes a
 * revision until its (asynchronous) commit, so that revisions are handed out
 * in commit order and stay contiguous (migrations 0001, 0008): every other
 * write of the shard, of every tenant, waits meanwhile. What a write did in
 * that window included all of its index work. For the GIN indexes (an
 * object's labels, its owner references, a change's labels: migrations
 * 0001/0019, 0007, 0018) that was costly: a write appends its entries to the
 * index's pending list (GIN's fast update), and the write whose append took
 * the list past `gin_pending_list_limit` (4 MB) merged the whole list into
 * the index tree itself. A 100,000-label ConfigMap is 300,000 entries: every
 * second such create, or the plain write after it, merged them inline, 2 s
 * on a quiet 2-core host, 5-7 s under load, with the counter held.
 *
 * Three changes, revisions allocated exactly as before (same counter, same
 * order, same contiguity; only where index work runs moved):
 *
 * 1. No writer merges a pending list: the three indexes' limit is at its
 *    maximum (2 TB, fast update on). `plinth_clean_gin_pending()` merges
 *    them outside any write: the write batcher calls it after its commits
 *    (WriteBatcher; one cleaner per shard at a time), and autovacuum cleans
 *    them too. Index scans read the pending list as well as the tree, so a
 *    label selector finds a committed write at once; the list stays short,
 *    being cleaned right after the writes that filled it.
 * 2. A write whose new body has a heavy label set (`plinth_labels_heavy`:
 *    its jsonb is 16 KiB or more, about a thousand short labels) stores its
 *    object row before it takes the counter: a create inserts it with
 *    revision 0, an update (which already holds the row's lock) writes the
 *    new body; after the counter, only the revision is set, which no index
 *    covers (a HOT update: no index entry, no TOAST). So the body's TOAST
 *    and its label and owner entries are made before the counter. A HOT
 *    update needs room on the row's page, so inserts now fill `objects`'
 *    pages to 90% (fillfactor): in the benchmark, with 8 clients inserting
 *    beside it, none of the heavy rows' updates was HOT at 100% (each
 *    then makes every index entry again, under the counter: correct, only
 *    slow). Nobody
 *    sees the row before it commits, with its revision. Inside a write
 *    batch, which takes the counter before its first write, nothing moves;
 *    the batcher sends label-heavy writes alone.
 * 3. A change's label element (migration 0018) of a heavy label set is
 *    only its scope's marker, `{"s": "<tenant> <resource>", "h": true}`,
 *    and `plinth_changes_with_labels` returns the changes that carry either
 *    the selector's labels or their scope's marker: still a necessary
 *    condition (the watch filters every change it reads with its whole
 *    selector), and a heavy change costs the log two entries, not one a
 *    label.
 *
 * A create inserting its row before the counter could deadlock with a
 * write holding the counter and inserting the same key (each waiting for
 * the other). So every create now takes a key lock
 * (`plinth_lock_key`, a transaction advisory lock on a hash of the key)
 * before the counter: a write batch takes those of its creates first, in
 * hash order, then the rows of its updates and deletes, then the counter.
 * Lock order: key locks, object rows, the counter, usage rows. A create
 * run inside a caller's transaction that already holds the counter (an
 * earlier write of it) takes its key lock after the counter; if a heavy
 * create of the same key is in flight, PostgreSQL detects the deadlock
 * and fails one of them, nothing worse.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  for (const index of DEFERRED_GIN_INDEXES) {
    await sql`ALTER INDEX ${sql.ref(index)} SET (fastupdate = on, gin_pending_list_limit = 2147483647)`.execute(db);
  }
  // Room on every page of objects for a second version of a row inserted there (item 2 above): a HOT update
  // needs it on the same page. Pages filled before keep what they have; only new inserts leave it.
  await sql`ALTER TABLE objects SET (fillfactor = ${sql.lit(OBJECTS_FILLFACTOR)})`.execute(db);
  await sql`
    -- Merges the deferred GIN indexes' pending lists into their trees; returns the pending pages cleaned, or -1
    -- when another session is cleaning them (it does not wait for it). Runs as the indexes' owner, whom
    -- gin_clean_pending_list requires. Call it outside any write's transaction: it takes no revision and no
    -- row lock, and a cleaning blocks no writer (they append to the list's tail meanwhile).
    CREATE FUNCTION plinth_clean_gin_pending() RETURNS bigint LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $fn$
    DECLARE cleaned bigint := 0;
    BEGIN
      IF NOT pg_try_advisory_xact_lock(46, 25) THEN RETURN -1; END IF;
      cleaned := cleaned + gin_clean_pending_list('objects_labels_idx'::regclass);
      cleaned := cleaned + gin_clean_pending_list('changes_labels_idx'::regclass);
      cleaned := cleaned + gin_clean_pending_list('objects_owner_refs_idx'::regclass);
      RETURN cleaned;
    END $fn$;
    REVOKE ALL ON FUNCTION plinth_clean_gin_pending() FROM PUBLIC;

    -- Whether a label set is heavy: about a thousand short labels or more (see above).
    CREATE FUNCTION plinth_labels_heavy(labels jsonb) RETURNS boolean LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $fn$
      SELECT coalesce(pg_column_size(labels) >= ${sql.lit(HEAVY_LABEL_BYTES)}, false)
    $fn$;

    -- A create's key lock: every create takes it before the revision counter (see above). Two keys may share
    -- one (a 32-bit hash): then one create waits for the other's commit, nothing worse.
    CREATE FUNCTION plinth_lock_key(p_tenant text, p_resource text, p_namespace text, p_name text) RETURNS void LANGUAGE sql AS $fn$
      SELECT pg_advisory_xact_lock(4625, hashtext(p_tenant || '/' || p_resource || '/' || p_namespace || '/' || p_name))
    $fn$;

    -- One state's element of a change's labels (migration 0018): its labels, or for a heavy set only the
    -- scope's marker, which every label-selected catch-up of the scope reads (then filters, as it does anyway).
    CREATE FUNCTION plinth_change_label_element(scope text, labels jsonb) RETURNS jsonb LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $fn$
      SELECT CASE WHEN plinth_labels_heavy(labels) THEN jsonb_build_object('s', scope, 'h', true) ELSE jsonb_build_object('s', scope, 'l', labels) END
    $fn$;
  `.execute(db);
  await sql.raw(CHANGE_LABELS_TRIGGER_NEW).execute(db);
  await sql.raw(WITH_LABELS_NEW).execute(db);
  await sql.raw(CREATE_NEW).execute(db);
  await sql.raw(UPDATE_NEW).execute(db);
  await sql.raw(BATCH_WRITES_NEW).execute(db);
}

/** Back to migration 0024: GIN's defaults (writers clean a list past 4 MB themselves), and every write's index work under the counter. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await sql.raw(BATCH_WRITES_OLD).execute(db);
  await sql.raw(UPDATE_OLD).execute(db);
  await sql.raw(CREATE_OLD).execute(db);
  await sql.raw(WITH_LABELS_OLD).execute(db);
  await sql.raw(CHANGE_LABELS_TRIGGER_OLD).execute(db);
  await sql`
    DROP FUNCTION plinth_change_label_element(text, jsonb);
    DROP FUNCTION plinth_lock_key(text, text, text, text);
    DROP FUNCTION plinth_labels_heavy(jsonb);
    DROP FUNCTION plinth_clean_gin_pending();
  `.execute(db);
  for (const index of DEFERRED_GIN_INDEXES) {
    await sql`ALTER INDEX ${sql.ref(index)} RESET (fastupdate, gin_pending_list_limit)`.execute(db);
  }
  await sql`ALTER TABLE objects RESET (fillfactor)`.execute(db);
}

/** Percent of a page of `objects` that inserts fill, leaving room for the HOT update of a label-heavy write. */
const OBJECTS_FILLFACTOR = 90;

/** Bytes of a label set (its jsonb) from which it is heavy: about a thousand short labels. */
export const HEAVY_LABEL_BYTES = 16384;

const CHANGE_LABELS_TRIGGER_NEW = `
CREATE OR REPLACE FUNCTION plinth_change_labels() RETURNS trigger LANGUAGE plpgsql AS $fn$
DECLARE
  scope text := NEW.tenant || ' ' || NEW.resource;
  new_labels jsonb;
  prev_labels jsonb := coalesce(NEW.prev_object -> 'metadata' -> 'labels', '{}');
  new_element jsonb;
  prev_element jsonb;
BEGIN
  IF NEW.object IS NOT NULL THEN
    new_labels := NEW.object -> 'metadata' -> 'labels';
  ELSIF NEW.type = 'D' THEN
    new_labels := prev_labels;
  ELSE
    SELECT o.body -> 'metadata' -> 'labels' INTO new_labels FROM objects o
      WHERE o.tenant = NEW.tenant AND o.resource = NEW.resource AND o.namespace = NEW.namespace AND o.name = NEW.name;
  END IF;
  new_element := plinth_change_label_element(scope, coalesce(new_labels, '{}'));
  -- One element when both states carry the same labels (most updates): half the bytes and index entries.
  IF NEW.type = 'A' THEN
    NEW.labels := jsonb_build_array(new_element);
  ELSE
    prev_element := plinth_change_label_element(scope, prev_labels);
    NEW.labels := CASE WHEN prev_element = new_element THEN jsonb_build_array(new_element) ELSE jsonb_build_array(new_element, prev_element) END;
  END IF;
  RETURN NEW;
END $fn$;
`;

const WITH_LABELS_NEW = `
CREATE OR REPLACE FUNCTION plinth_changes_with_labels(p_tenant text, p_resource text, p_namespace text, p_name text, p_after bigint, p_limit integer, p_labels jsonb)
RETURNS SETOF changes LANGUAGE sql STABLE SET enable_indexscan = off SET enable_seqscan = off AS $fn$
  SELECT * FROM changes c
    WHERE (c.labels @> p_labels OR c.labels @> jsonb_build_array(jsonb_build_object('s', p_tenant || ' ' || p_resource, 'h', true)))
      AND c.revision > p_after AND c.tenant = p_tenant AND c.resource = p_resource
      AND (p_namespace IS NULL OR c.namespace = p_namespace) AND (p_name IS NULL OR c.name = p_name)
    ORDER BY c.revision LIMIT p_limit
$fn$;
`;

const CREATE_NEW = `
CREATE OR REPLACE FUNCTION plinth_create(p_tenant text, p_resource text, p_namespace text, p_name text, p_body jsonb)
RETURNS bigint LANGUAGE plpgsql AS $fn$
DECLARE r bigint; heavy boolean := plinth_labels_heavy(p_body -> 'metadata' -> 'labels');
BEGIN
  PERFORM set_config('synchronous_commit', 'off', true);
  PERFORM plinth_lock_key(p_tenant, p_resource, p_namespace, p_name);
  IF heavy THEN
    -- The row, its TOAST and its index entries before the counter; no other session sees it before it commits.
    INSERT INTO objects (tenant, resource, namespace, name, revision, body)
      VALUES (p_tenant, p_resource, p_namespace, p_name, 0, p_body)
      ON CONFLICT DO NOTHING;
    IF NOT FOUND THEN
      RAISE EXCEPTION USING ERRCODE = 'P0409', MESSAGE = 'already exists';
    END IF;
  END IF;
  r := plinth_next_revision();
  PERFORM plinth_check_tenant(p_tenant);
  IF heavy THEN
    -- No index covers the revision: a HOT update, no index entry.
    UPDATE objects SET revision = r
      WHERE tenant = p_tenant AND resource = p_resource AND namespace = p_namespace AND name = p_name;
  ELSE
    INSERT INTO objects (tenant, resource, namespace, name, revision, body)
      VALUES (p_tenant, p_resource, p_namespace, p_name, r, p_body)
      ON CONFLICT DO NOTHING;
    IF NOT FOUND THEN
      RAISE EXCEPTION USING ERRCODE = 'P0409', MESSAGE = 'already exists';
    END IF;
  END IF;
  PERFORM plinth_account(p_tenant, p_resource, 1, pg_column_size(p_body));
  PERFORM plinth_account_quota(p_tenant, p_namespace, p_resource, 1);
  INSERT INTO changes (revision, tenant, resource, namespace, name, type)
    VALUES (r, p_tenant, p_resource, p_namespace, p_name, 'A');
  PERFORM pg_notify('plinth_changes', r::text);
  RETURN r;
END $fn$;
`;

const UPDATE_NEW = `
CREATE OR REPLACE FUNCTION plinth_update(p_tenant text, p_resource text, p_namespace text, p_name text, p_body jsonb, p_expected bigint)
RETURNS bigint LANGUAGE plpgsql AS $fn$
DECLARE r bigint; old_body jsonb; old_rev bigint; heavy boolean := plinth_labels_heavy(p_body -> 'metadata' -> 'labels');
BEGIN
  PERFORM set_config('synchronous_commit', 'off', true);
  SELECT l.body, l.revision INTO old_body, old_rev FROM plinth_lock_current(p_tenant, p_resource, p_namespace, p_name, p_expected) l;
  IF heavy THEN
    -- The new body's TOAST and index entries before the counter, under the row lock taken above.
    UPDATE objects SET body = p_body
      WHERE tenant = p_tenant AND resource = p_resource AND namespace = p_namespace AND name = p_name;
  END IF;
  r := plinth_next_revision();
  PERFORM plinth_check_tenant(p_tenant);
  IF heavy THEN
    -- Only the revision: a HOT update (setting the body again would store and index it again).
    UPDATE objects SET revision = r
      WHERE tenant = p_tenant AND resource = p_resource AND namespace = p_namespace AND name = p_name;
  ELSE
    UPDATE objects SET body = p_body, revision = r
      WHERE tenant = p_tenant AND resource = p_resource AND namespace = p_namespace AND name = p_name;
  END IF;
  PERFORM plinth_account(p_tenant, p_resource, 0, plinth_body_size(p_body) - plinth_body_size(old_body));
  INSERT INTO changes (revision, tenant, resource, namespace, name, type, prev_object, prev_revision)
    VALUES (r, p_tenant, p_resource, p_namespace, p_name, 'M', old_body, old_rev);
  PERFORM pg_notify('plinth_changes', r::text);
  RETURN r;
END $fn$;
`;

const BATCH_WRITES_NEW = `
CREATE OR REPLACE FUNCTION plinth_write_batch_writes(p_ops jsonb) RETURNS jsonb LANGUAGE plpgsql AS $fn$
DECLARE w jsonb; ck record; results jsonb[] := '{}'; base bigint; last bigint;
BEGIN
  PERFORM set_config('synchronous_commit', 'off', true);
  -- Lock order: the creates' key locks (in hash order), the rows of updates and deletes (in key order), the counter.
  FOR ck IN SELECT c.t, c.r, c.s, c.n FROM jsonb_to_recordset(p_ops) AS c(op text, t text, r text, s text, n text)
      WHERE c.op = 'c' ORDER BY hashtext(c.t || '/' || c.r || '/' || c.s || '/' || c.n) LOOP
    PERFORM plinth_lock_key(ck.t, ck.r, ck.s, ck.n);
  END LOOP;
  PERFORM 1 FROM objects o
    JOIN jsonb_to_recordset(p_ops) AS k(op text, t text, r text, s text, n text)
      ON o.tenant = k.t AND o.resource = k.r AND o.namespace = k.s AND o.name = k.n
    WHERE k.op <> 'c'
    ORDER BY o.tenant, o.resource, o.namespace, o.name
    FOR UPDATE OF o;
  SELECT value INTO base FROM revision_counter WHERE id = 1 FOR UPDATE;
  PERFORM set_config('plinth.next_revision', (base + 1)::text, true);
  FOR w IN SELECT e.value FROM jsonb_array_elements(p_ops) WITH ORDINALITY AS e(value, i) ORDER BY e.i LOOP
    BEGIN
      results := results || plinth_write_one(w);
    EXCEPTION WHEN OTHERS THEN
      results := results || jsonb_build_object('e', SQLSTATE, 'm', SQLERRM);
    END;
  END LOOP;
  last := current_setting('plinth.next_revision')::bigint - 1;
  PERFORM set_config('plinth.next_revision', '', true);
  IF last > base THEN
    UPDATE revision_counter SET value = last WHERE id = 1;
  END IF;
  RETURN to_jsonb(results);
END $fn$;
`;

// The definitions migration 0024 left, restored by `down`.
const CHANGE_LABELS_TRIGGER_OLD = `
CREATE OR REPLACE FUNCTION plinth_change_labels()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
    DECLARE
      scope text := NEW.tenant || ' ' || NEW.resource;
      new_labels jsonb;
      prev_labels jsonb := coalesce(NEW.prev_object -> 'metadata' -> 'labels', '{}');
    BEGIN
      IF NEW.object IS NOT NULL THEN
        new_labels := NEW.object -> 'metadata' -> 'labels';
      ELSIF NEW.type = 'D' THEN
        new_labels := prev_labels;
      ELSE
        SELECT o.body -> 'metadata' -> 'labels' INTO new_labels FROM objects o
          WHERE o.tenant = NEW.tenant AND o.resource = NEW.resource AND o.namespace = NEW.namespace AND o.name = NEW.name;
      END IF;
      new_labels := coalesce(new_labels, '{}');
      -- One element when both states carry the same labels (most updates): half the bytes and index entries.
      IF prev_labels = new_labels OR NEW.type = 'A' THEN
        NEW.labels := jsonb_build_array(jsonb_build_object('s', scope, 'l', new_labels));
      ELSE
        NEW.labels := jsonb_build_array(jsonb_build_object('s', scope, 'l', new_labels), jsonb_build_object('s', scope, 'l', prev_labels));
      END IF;
      RETURN NEW;
    END $function$;
`;

const WITH_LABELS_OLD = `
CREATE OR REPLACE FUNCTION plinth_changes_with_labels(p_tenant text, p_resource text, p_namespace text, p_name text, p_after bigint, p_limit integer, p_labels jsonb)
 RETURNS SETOF changes
 LANGUAGE sql
 STABLE
 SET enable_indexscan TO 'off'
 SET enable_seqscan TO 'off'
AS $function$
      SELECT * FROM changes c
        WHERE c.labels @> p_labels AND c.revision > p_after AND c.tenant = p_tenant AND c.resource = p_resource
          AND (p_namespace IS NULL OR c.namespace = p_namespace) AND (p_name IS NULL OR c.name = p_name)
        ORDER BY c.revision LIMIT p_limit
    $function$;
`;

const CREATE_OLD = `
CREATE OR REPLACE FUNCTION plinth_create(p_tenant text, p_resource text, p_namespace text, p_name text, p_body jsonb)
 RETURNS bigint
 LANGUAGE plpgsql
AS $function$
    DECLARE r bigint;
    BEGIN
      PERFORM set_config('synchronous_commit', 'off', true);
      r := plinth_next_revision();
      PERFORM plinth_check_tenant(p_tenant);
      INSERT INTO objects (tenant, resource, namespace, name, revision, body)
        VALUES (p_tenant, p_resource, p_namespace, p_name, r, p_body)
        ON CONFLICT DO NOTHING;
      IF NOT FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'P0409', MESSAGE = 'already exists';
      END IF;
      PERFORM plinth_account(p_tenant, p_resource, 1, pg_column_size(p_body));
      PERFORM plinth_account_quota(p_tenant, p_namespace, p_resource, 1);
      INSERT INTO changes (revision, tenant, resource, namespace, name, type)
        VALUES (r, p_tenant, p_resource, p_namespace, p_name, 'A');
      PERFORM pg_notify('plinth_changes', r::text);
      RETURN r;
    END $function$;
`;

const UPDATE_OLD = `
CREATE OR REPLACE FUNCTION plinth_update(p_tenant text, p_resource text, p_namespace text, p_name text, p_body jsonb, p_expected bigint)
 RETURNS bigint
 LANGUAGE plpgsql
AS $function$
    DECLARE r bigint; old_body jsonb; old_rev bigint;
    BEGIN
      PERFORM set_config('synchronous_commit', 'off', true);
      SELECT l.body, l.revision INTO old_body, old_rev FROM plinth_lock_current(p_tenant, p_resource, p_namespace, p_name, p_expected) l;
      r := plinth_next_revision();
      PERFORM plinth_check_tenant(p_tenant);
      UPDATE objects SET body = p_body, revision = r
        WHERE tenant = p_tenant AND resource = p_resource AND namespace = p_namespace AND name = p_name;
      PERFORM plinth_account(p_tenant, p_resource, 0, plinth_body_size(p_body) - plinth_body_size(old_body));
      INSERT INTO changes (revision, tenant, resource, namespace, name, type, prev_object, prev_revision)
        VALUES (r, p_tenant, p_resource, p_namespace, p_name, 'M', old_body, old_rev);
      PERFORM pg_notify('plinth_changes', r::text);
      RETURN r;
    END $function$;
`;

const BATCH_WRITES_OLD = `
CREATE OR REPLACE FUNCTION plinth_write_batch_writes(p_ops jsonb)
 RETURNS jsonb
 LANGUAGE plpgsql
AS $function$
    DECLARE w jsonb; results jsonb[] := '{}'; base bigint; last bigint;
    BEGIN
      PERFORM set_config('synchronous_commit', 'off', true);
      PERFORM 1 FROM objects o
        JOIN jsonb_to_recordset(p_ops) AS k(op text, t text, r text, s text, n text)
          ON o.tenant = k.t AND o.resource = k.r AND o.namespace = k.s AND o.name = k.n
        WHERE k.op <> 'c'
        ORDER BY o.tenant, o.resource, o.namespace, o.name
        FOR UPDATE OF o;
      SELECT value INTO base FROM revision_counter WHERE id = 1 FOR UPDATE;
      PERFORM set_config('plinth.next_revision', (base + 1)::text, true);
      FOR w IN SELECT e.value FROM jsonb_array_elements(p_ops) WITH ORDINALITY AS e(value, i) ORDER BY e.i LOOP
        BEGIN
          results := results || plinth_write_one(w);
        EXCEPTION WHEN OTHERS THEN
          results := results || jsonb_build_object('e', SQLSTATE, 'm', SQLERRM);
        END;
      END LOOP;
      last := current_setting('plinth.next_revision')::bigint - 1;
      PERFORM set_config('plinth.next_revision', '', true);
      IF last > base THEN
        UPDATE revision_counter SET value = last WHERE id = 1;
      END IF;
      RETURN to_jsonb(results);
    END $function$;
`;
