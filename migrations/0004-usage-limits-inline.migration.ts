import { type Kysely, sql } from 'kysely';

/**
 * Cheaper usage accounting (migration 0003 cost about 30% of the raw
 * create rate): the limits move into the usage rows (`max_objects`,
 * `max_bytes` of `tenant_usage`), so a write updates its usage rows with one
 * UPDATE … RETURNING that also yields the limits, instead of an upsert and a
 * limit lookup per key; rows are inserted only the first time a key is
 * used. Bytes are the stored jsonb datum's size (`pg_column_size`), which
 * needs no conversion to text. The semantics are 0003's.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE tenant_usage ADD COLUMN max_objects bigint, ADD COLUMN max_bytes bigint;
    INSERT INTO tenant_usage AS t (tenant, usage_key, max_objects, max_bytes)
      SELECT l.tenant, l.usage_key, l.max_objects, l.max_bytes FROM tenant_limits l
      ON CONFLICT (tenant, usage_key) DO UPDATE SET max_objects = EXCLUDED.max_objects, max_bytes = EXCLUDED.max_bytes;
    DROP TABLE tenant_limits;

    -- Bytes were measured as text before: measure what is stored from now on.
    UPDATE tenant_usage t SET bytes = coalesce(s.bytes, 0)
      FROM (
        SELECT o.tenant, k.key, sum(pg_column_size(o.body)) AS bytes
        FROM objects o CROSS JOIN LATERAL unnest(plinth_usage_keys(o.resource)) AS k(key)
        GROUP BY o.tenant, k.key
      ) s
      WHERE s.tenant = t.tenant AND s.key = t.usage_key;

    CREATE OR REPLACE FUNCTION plinth_account(p_tenant text, p_resource text, d_objects bigint, d_bytes bigint) RETURNS void LANGUAGE plpgsql AS $fn$
    DECLARE keys text[]; seen text[] := '{}'; v record;
    BEGIN
      IF d_objects = 0 AND d_bytes = 0 THEN RETURN; END IF;
      keys := plinth_usage_keys(p_resource);
      FOR v IN
        UPDATE tenant_usage t SET objects = t.objects + d_objects, bytes = t.bytes + d_bytes
          WHERE t.tenant = p_tenant AND t.usage_key = ANY (keys)
          RETURNING t.usage_key, t.objects, t.bytes, t.max_objects, t.max_bytes
      LOOP
        seen := seen || v.usage_key;
        PERFORM plinth_check_limit(v.usage_key, v.objects, v.bytes, v.max_objects, v.max_bytes, d_objects, d_bytes);
      END LOOP;
      IF cardinality(seen) < cardinality(keys) THEN
        FOR v IN
          INSERT INTO tenant_usage AS t (tenant, usage_key, objects, bytes)
            SELECT p_tenant, k, d_objects, d_bytes FROM unnest(keys) AS k WHERE NOT k = ANY (seen)
            ON CONFLICT (tenant, usage_key) DO UPDATE SET objects = t.objects + d_objects, bytes = t.bytes + d_bytes
            RETURNING t.usage_key, t.objects, t.bytes, t.max_objects, t.max_bytes
        LOOP
          PERFORM plinth_check_limit(v.usage_key, v.objects, v.bytes, v.max_objects, v.max_bytes, d_objects, d_bytes);
        END LOOP;
      END IF;
    END $fn$;

    -- Refuses growth past a limit (P0429, message "key|objects or bytes|limit|used before|requested").
    CREATE FUNCTION plinth_check_limit(k text, u_objects bigint, u_bytes bigint, l_objects bigint, l_bytes bigint, d_objects bigint, d_bytes bigint) RETURNS void LANGUAGE plpgsql AS $fn$
    BEGIN
      IF d_objects > 0 AND l_objects IS NOT NULL AND u_objects > l_objects THEN
        RAISE EXCEPTION USING ERRCODE = 'P0429', MESSAGE = format('%s|objects|%s|%s|%s', k, l_objects, u_objects - d_objects, d_objects);
      END IF;
      IF d_bytes > 0 AND l_bytes IS NOT NULL AND u_bytes > l_bytes THEN
        RAISE EXCEPTION USING ERRCODE = 'P0429', MESSAGE = format('%s|bytes|%s|%s|%s', k, l_bytes, u_bytes - d_bytes, d_bytes);
      END IF;
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
      PERFORM plinth_account(p_tenant, p_resource, 0, pg_column_size(p_body) - pg_column_size(old_body));
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
      PERFORM plinth_account(p_tenant, p_resource, -1, -pg_column_size(old_body));
      INSERT INTO changes (revision, tenant, resource, namespace, name, type, object, prev_object, prev_revision)
        VALUES (r, p_tenant, p_resource, p_namespace, p_name, 'D', old_body, old_body, old_rev);
      PERFORM pg_notify('plinth_changes', r::text);
      RETURN QUERY SELECT r, old_body;
    END $fn$;
  `.execute(db);
}

/** Brings back 0003's separate limits table and accounting (bytes stay as measured here). */
export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE tenant_limits (
      tenant text NOT NULL,
      usage_key text NOT NULL,
      max_objects bigint,
      max_bytes bigint,
      PRIMARY KEY (tenant, usage_key)
    );
    INSERT INTO tenant_limits SELECT tenant, usage_key, max_objects, max_bytes FROM tenant_usage WHERE max_objects IS NOT NULL OR max_bytes IS NOT NULL;
    ALTER TABLE tenant_usage DROP COLUMN max_objects, DROP COLUMN max_bytes;
    CREATE OR REPLACE FUNCTION plinth_account(p_tenant text, p_resource text, d_objects bigint, d_bytes bigint) RETURNS void LANGUAGE plpgsql AS $fn$
    DECLARE k text; u_objects bigint; u_bytes bigint; l_objects bigint; l_bytes bigint;
    BEGIN
      IF d_objects = 0 AND d_bytes = 0 THEN RETURN; END IF;
      FOREACH k IN ARRAY plinth_usage_keys(p_resource) LOOP
        INSERT INTO tenant_usage AS t (tenant, usage_key, objects, bytes) VALUES (p_tenant, k, d_objects, d_bytes)
          ON CONFLICT (tenant, usage_key) DO UPDATE SET objects = t.objects + d_objects, bytes = t.bytes + d_bytes
          RETURNING t.objects, t.bytes INTO u_objects, u_bytes;
        IF d_objects > 0 OR d_bytes > 0 THEN
          SELECT l.max_objects, l.max_bytes INTO l_objects, l_bytes FROM tenant_limits l WHERE l.tenant = p_tenant AND l.usage_key = k;
          PERFORM plinth_check_limit(k, u_objects, u_bytes, l_objects, l_bytes, d_objects, d_bytes);
        END IF;
      END LOOP;
    END $fn$;
  `.execute(db);
}
