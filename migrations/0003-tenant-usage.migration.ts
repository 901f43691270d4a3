import { type Kysely, sql } from 'kysely';

/**
 * Tenant usage and limits, exact at write time.
 *
 * `tenant_usage` counts each tenant's objects and stored bytes per usage
 * key: `''` (everything), the storage resource, and a category for kinds a
 * limit groups (`webhookconfigurations`: validating + mutating). Every write
 * function updates those rows in its own transaction (`plinth_account`), so
 * the counts are never stale and never scanned. A write that makes a count
 * grow past a `tenant_limits` row of the same key fails with SQLSTATE P0429
 * and rolls back: the row lock on the usage row orders concurrent writers,
 * so a limit of N admits exactly N objects however many race for the last
 * place. Deletes and shrinking updates give the room back. Bytes are the
 * stored JSON's length (`octet_length(body::text)`).
 *
 * Lock order stays deadlock-free: every write takes the object's row (update,
 * delete), then the revision counter, then usage rows in key order.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE tenant_usage (
      tenant text NOT NULL,
      usage_key text NOT NULL,
      objects bigint NOT NULL DEFAULT 0,
      bytes bigint NOT NULL DEFAULT 0,
      PRIMARY KEY (tenant, usage_key)
    );

    CREATE TABLE tenant_limits (
      tenant text NOT NULL,
      usage_key text NOT NULL,
      max_objects bigint,
      max_bytes bigint,
      PRIMARY KEY (tenant, usage_key)
    );

    CREATE FUNCTION plinth_usage_keys(p_resource text) RETURNS text[] LANGUAGE sql IMMUTABLE AS $fn$
      SELECT CASE
        WHEN p_resource IN ('admissionregistration.k8s.io/validatingwebhookconfigurations', 'admissionregistration.k8s.io/mutatingwebhookconfigurations')
          THEN ARRAY['', p_resource, 'webhookconfigurations']
        ELSE ARRAY['', p_resource]
      END
    $fn$;

    -- Adds d_objects and d_bytes to every usage key of p_resource; refuses growth past a limit (P0429,
    -- message "key|objects or bytes|limit|used before|requested").
    CREATE FUNCTION plinth_account(p_tenant text, p_resource text, d_objects bigint, d_bytes bigint) RETURNS void LANGUAGE plpgsql AS $fn$
    DECLARE k text; u_objects bigint; u_bytes bigint; l_objects bigint; l_bytes bigint;
    BEGIN
      IF d_objects = 0 AND d_bytes = 0 THEN RETURN; END IF;
      FOREACH k IN ARRAY plinth_usage_keys(p_resource) LOOP
        INSERT INTO tenant_usage AS t (tenant, usage_key, objects, bytes) VALUES (p_tenant, k, d_objects, d_bytes)
          ON CONFLICT (tenant, usage_key) DO UPDATE SET objects = t.objects + d_objects, bytes = t.bytes + d_bytes
          RETURNING t.objects, t.bytes INTO u_objects, u_bytes;
        IF d_objects > 0 OR d_bytes > 0 THEN
          SELECT l.max_objects, l.max_bytes INTO l_objects, l_bytes FROM tenant_limits l WHERE l.tenant = p_tenant AND l.usage_key = k;
          IF d_objects > 0 AND l_objects IS NOT NULL AND u_objects > l_objects THEN
            RAISE EXCEPTION USING ERRCODE = 'P0429', MESSAGE = format('%s|objects|%s|%s|%s', k, l_objects, u_objects - d_objects, d_objects);
          END IF;
          IF d_bytes > 0 AND l_bytes IS NOT NULL AND u_bytes > l_bytes THEN
            RAISE EXCEPTION USING ERRCODE = 'P0429', MESSAGE = format('%s|bytes|%s|%s|%s', k, l_bytes, u_bytes - d_bytes, d_bytes);
          END IF;
        END IF;
      END LOOP;
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
      PERFORM plinth_account(p_tenant, p_resource, 1, octet_length(p_body::text));
      INSERT INTO changes (revision, tenant, resource, namespace, name, type, object)
        VALUES (r, p_tenant, p_resource, p_namespace, p_name, 'A', p_body);
      PERFORM pg_notify('plinth_changes', r::text);
      RETURN r;
    END $fn$;

    CREATE OR REPLACE FUNCTION plinth_update(p_tenant text, p_resource text, p_namespace text, p_name text, p_body jsonb, p_expected bigint)
    RETURNS bigint LANGUAGE plpgsql AS $fn$
    DECLARE r bigint; old_body jsonb; old_rev bigint;
    BEGIN
      PERFORM set_config('synchronous_commit', 'off', true);
      SELECT l.body, l.revision INTO old_body, old_rev FROM plinth_lock_current(p_tenant, p_resource, p_namespace, p_name, p_expected) l;
      r := plinth_next_revision();
      PERFORM plinth_check_tenant(p_tenant);
      UPDATE objects SET body = p_body, revision = r
        WHERE tenant = p_tenant AND resource = p_resource AND namespace = p_namespace AND name = p_name;
      PERFORM plinth_account(p_tenant, p_resource, 0, octet_length(p_body::text) - octet_length(old_body::text));
      INSERT INTO changes (revision, tenant, resource, namespace, name, type, object, prev_object, prev_revision)
        VALUES (r, p_tenant, p_resource, p_namespace, p_name, 'M', p_body, old_body, old_rev);
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
      PERFORM plinth_account(p_tenant, p_resource, -1, -octet_length(old_body::text));
      INSERT INTO changes (revision, tenant, resource, namespace, name, type, object, prev_object, prev_revision)
        VALUES (r, p_tenant, p_resource, p_namespace, p_name, 'D', old_body, old_body, old_rev);
      PERFORM pg_notify('plinth_changes', r::text);
      RETURN QUERY SELECT r, old_body;
    END $fn$;

    -- What already exists is counted once, here; from now on every write keeps the counts.
    INSERT INTO tenant_usage (tenant, usage_key, objects, bytes)
      SELECT o.tenant, k.key, count(*), sum(octet_length(o.body::text))
      FROM objects o CROSS JOIN LATERAL unnest(plinth_usage_keys(o.resource)) AS k(key)
      GROUP BY o.tenant, k.key;
  `.execute(db);
}

/** Restores the write functions of 0002 and drops usage and limits. */
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
      INSERT INTO changes (revision, tenant, resource, namespace, name, type, object)
        VALUES (r, p_tenant, p_resource, p_namespace, p_name, 'A', p_body);
      PERFORM pg_notify('plinth_changes', r::text);
      RETURN r;
    END $fn$;

    CREATE OR REPLACE FUNCTION plinth_update(p_tenant text, p_resource text, p_namespace text, p_name text, p_body jsonb, p_expected bigint)
    RETURNS bigint LANGUAGE plpgsql AS $fn$
    DECLARE r bigint; old_body jsonb; old_rev bigint;
    BEGIN
      PERFORM set_config('synchronous_commit', 'off', true);
      SELECT l.body, l.revision INTO old_body, old_rev FROM plinth_lock_current(p_tenant, p_resource, p_namespace, p_name, p_expected) l;
      r := plinth_next_revision();
      PERFORM plinth_check_tenant(p_tenant);
      UPDATE objects SET body = p_body, revision = r
        WHERE tenant = p_tenant AND resource = p_resource AND namespace = p_namespace AND name = p_name;
      INSERT INTO changes (revision, tenant, resource, namespace, name, type, object, prev_object, prev_revision)
        VALUES (r, p_tenant, p_resource, p_namespace, p_name, 'M', p_body, old_body, old_rev);
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
      INSERT INTO changes (revision, tenant, resource, namespace, name, type, object, prev_object, prev_revision)
        VALUES (r, p_tenant, p_resource, p_namespace, p_name, 'D', old_body, old_body, old_rev);
      PERFORM pg_notify('plinth_changes', r::text);
      RETURN QUERY SELECT r, old_body;
    END $fn$;

    DROP FUNCTION plinth_account(text, text, bigint, bigint);
    DROP FUNCTION plinth_usage_keys(text);
    DROP TABLE tenant_limits;
    DROP TABLE tenant_usage;
  `.execute(db);
}
