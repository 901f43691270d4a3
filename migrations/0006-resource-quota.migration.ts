import { type Kysely, sql } from 'kysely';

/**
 * ResourceQuota object counts, exact at write time.
 *
 * `quota_usage` has one row per quota and counted resource: the objects of
 * that resource in the quota's namespace, and the quota's hard limit. A
 * quota's rows are (re)built by `plinth_set_quota` under the revision
 * counter's lock, so no write is between its counter lock and its commit
 * while the current objects are counted, and every later write sees the
 * rows. Every create and delete of a namespaced object updates the rows of
 * its namespace and resource in its own transaction (`plinth_account_quota`,
 * one index probe when the namespace has no quota); growth past a hard limit
 * fails with SQLSTATE P0430 (message `quota|hard name|limit|used|requested`)
 * and rolls back. Deleting a ResourceQuota removes its rows in the same
 * transaction.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE quota_usage (
      tenant text NOT NULL,
      namespace text NOT NULL,
      resource text NOT NULL,
      quota text NOT NULL,
      hard_name text NOT NULL,
      objects bigint NOT NULL,
      max_objects bigint NOT NULL,
      PRIMARY KEY (tenant, namespace, resource, quota)
    );

    CREATE FUNCTION plinth_account_quota(p_tenant text, p_namespace text, p_resource text, d_objects bigint) RETURNS void LANGUAGE plpgsql AS $fn$
    DECLARE v record;
    BEGIN
      IF p_namespace = '' THEN RETURN; END IF;
      FOR v IN
        UPDATE quota_usage q SET objects = q.objects + d_objects
          WHERE q.tenant = p_tenant AND q.namespace = p_namespace AND q.resource = p_resource
          RETURNING q.quota, q.hard_name, q.objects, q.max_objects
      LOOP
        IF d_objects > 0 AND v.objects > v.max_objects THEN
          RAISE EXCEPTION USING ERRCODE = 'P0430', MESSAGE = format('%s|%s|%s|%s|%s', v.quota, v.hard_name, v.max_objects, v.objects - d_objects, d_objects);
        END IF;
      END LOOP;
    END $fn$;

    -- Replaces the rows of one quota: p_resources[i] counted against p_maxes[i], named p_names[i] in messages.
    CREATE FUNCTION plinth_set_quota(p_tenant text, p_namespace text, p_quota text, p_resources text[], p_names text[], p_maxes bigint[]) RETURNS void LANGUAGE plpgsql AS $fn$
    BEGIN
      PERFORM 1 FROM revision_counter WHERE id = 1 FOR UPDATE;
      PERFORM plinth_check_tenant(p_tenant);
      DELETE FROM quota_usage WHERE tenant = p_tenant AND namespace = p_namespace AND quota = p_quota;
      INSERT INTO quota_usage (tenant, namespace, resource, quota, hard_name, objects, max_objects)
        SELECT p_tenant, p_namespace, r.resource, p_quota, r.hard_name,
          (SELECT count(*) FROM objects o WHERE o.tenant = p_tenant AND o.resource = r.resource AND o.namespace = p_namespace),
          r.max_objects
        FROM unnest(p_resources, p_names, p_maxes) AS r(resource, hard_name, max_objects);
    END $fn$;

    CREATE OR REPLACE FUNCTION plinth_create(p_tenant text, p_resource text, p_namespace text, p_name text, p_body jsonb)
    RETURNS bigint LANGUAGE plpgsql AS $fn$
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
      INSERT INTO changes (revision, tenant, resource, namespace, name, type, object)
        VALUES (r, p_tenant, p_resource, p_namespace, p_name, 'A', p_body);
      PERFORM pg_notify('plinth_changes', r::text);
      RETURN r;
    END $fn$;

    CREATE OR REPLACE FUNCTION plinth_delete(p_tenant text, p_resource text, p_namespace text, p_name text, p_expected bigint)
    RETURNS TABLE (revision bigint, body jsonb) LANGUAGE plpgsql AS $fn$
    DECLARE r bigint; old_body jsonb; old_rev bigint;
    BEGIN
      PERFORM set_config('synchronous_commit', 'off', true);
      SELECT l.body, l.revision INTO old_body, old_rev FROM plinth_lock_current(p_tenant, p_resource, p_namespace, p_name, p_expected) l;
      r := plinth_next_revision();
      PERFORM plinth_check_tenant(p_tenant);
      DELETE FROM objects o
        WHERE o.tenant = p_tenant AND o.resource = p_resource AND o.namespace = p_namespace AND o.name = p_name;
      PERFORM plinth_account(p_tenant, p_resource, -1, -pg_column_size(old_body));
      PERFORM plinth_account_quota(p_tenant, p_namespace, p_resource, -1);
      IF p_resource = 'resourcequotas' THEN
        DELETE FROM quota_usage q WHERE q.tenant = p_tenant AND q.namespace = p_namespace AND q.quota = p_name;
      END IF;
      INSERT INTO changes (revision, tenant, resource, namespace, name, type, object, prev_object, prev_revision)
        VALUES (r, p_tenant, p_resource, p_namespace, p_name, 'D', old_body, old_body, old_rev);
      PERFORM pg_notify('plinth_changes', r::text);
      RETURN QUERY SELECT r, old_body;
    END $fn$;
  `.execute(db);
}

/** Back to 0004's write functions; quotas are forgotten. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE OR REPLACE FUNCTION plinth_create(p_tenant text, p_resource text, p_namespace text, p_name text, p_body jsonb)
    RETURNS bigint LANGUAGE plpgsql AS $fn$
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
      INSERT INTO changes (revision, tenant, resource, namespace, name, type, object)
        VALUES (r, p_tenant, p_resource, p_namespace, p_name, 'A', p_body);
      PERFORM pg_notify('plinth_changes', r::text);
      RETURN r;
    END $fn$;

    CREATE OR REPLACE FUNCTION plinth_delete(p_tenant text, p_resource text, p_namespace text, p_name text, p_expected bigint)
    RETURNS TABLE (revision bigint, body jsonb) LANGUAGE plpgsql AS $fn$
    DECLARE r bigint; old_body jsonb; old_rev bigint;
    BEGIN
      PERFORM set_config('synchronous_commit', 'off', true);
      SELECT l.body, l.revision INTO old_body, old_rev FROM plinth_lock_current(p_tenant, p_resource, p_namespace, p_name, p_expected) l;
      r := plinth_next_revision();
      PERFORM plinth_check_tenant(p_tenant);
      DELETE FROM objects o
        WHERE o.tenant = p_tenant AND o.resource = p_resource AND o.namespace = p_namespace AND o.name = p_name;
      PERFORM plinth_account(p_tenant, p_resource, -1, -pg_column_size(old_body));
      INSERT INTO changes (revision, tenant, resource, namespace, name, type, object, prev_object, prev_revision)
        VALUES (r, p_tenant, p_resource, p_namespace, p_name, 'D', old_body, old_body, old_rev);
      PERFORM pg_notify('plinth_changes', r::text);
      RETURN QUERY SELECT r, old_body;
    END $fn$;

    DROP FUNCTION plinth_set_quota(text, text, text, text[], text[], bigint[]);
    DROP FUNCTION plinth_account_quota(text, text, text, bigint);
    DROP TABLE quota_usage;
  `.execute(db);
}
