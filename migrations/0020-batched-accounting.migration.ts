import { type Kysely, sql } from 'kysely';

/**
 * A batch checks its tenant once and, for a tenant with no limits and a
 * namespace with no quota, counts its usage once, not once per write
 * (issue 29: in a batch of 14 creates the per-write tenant check, usage
 * UPDATE and quota probe were about 120 µs of PostgreSQL's 420 µs per
 * create).
 *
 * Everything here holds only inside `plinth_write_batch`, i.e. while the
 * batch holds the revision counter's lock (`plinth_in_batch()`), because
 * what it remembers can change only under that lock: a tenant's phase and
 * fence (migrations 0002, 0014), its limits (TenantRepository.setLimits)
 * and a namespace's quota rows (plinth_set_quota, and a ResourceQuota's
 * delete, a write itself). In transaction-local settings:
 *
 * - `plinth.checked_tenant`: the tenant `plinth_check_tenant` found Active
 *   and unfenced; later writes of the batch skip the lookup.
 * - `plinth.tenant_limits`: whether the tenant has any limit (`tenant:none`
 *   or `tenant:some`). With none, `plinth_account` has nothing to refuse:
 *   it appends the write's counts to `plinth.usage` (a line each), and the
 *   batch adds their sums to the usage rows at its end
 *   (`plinth_flush_batch_counts`, one upsert). With some, every write counts
 *   and checks itself at once, as before.
 * - `plinth.quota_free`: namespaces found to have no quota rows; a write
 *   there has nothing to count. Elsewhere the quota rows are updated and
 *   checked by each write, as before.
 *
 * Bytes are measured one way (`plinth_body_size`, the jsonb value's own
 * size, whatever header or compression PostgreSQL stored it with): before,
 * a create counted the value as given while an update or delete took back
 * `pg_column_size` of the old value, which for a small value stored with a
 * 1-byte header is 3 bytes less (seen in batched writes), and the
 * encryption rotation compared the stored, possibly compressed, old size
 * with the new value's. So a tenant's bytes crept up with such writes. The
 * usage rows are recounted that way here.
 *
 * A setting changed in a write's subtransaction reverts when the write is
 * refused, as `plinth.next_revision` does (migration 0008), so a refused
 * write takes its counts back with the rest of its work. Outside a batch
 * the functions do what they did (the previous bodies, renamed `…_now`).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER FUNCTION plinth_check_tenant(text) RENAME TO plinth_check_tenant_now;
    ALTER FUNCTION plinth_account(text, text, bigint, bigint) RENAME TO plinth_account_now;
    ALTER FUNCTION plinth_account_quota(text, text, text, bigint) RENAME TO plinth_account_quota_now;
    ALTER FUNCTION plinth_write_batch(jsonb) RENAME TO plinth_write_batch_writes;

    -- A jsonb value's size as given, whether PostgreSQL stored it with a short header or compressed it (an
    -- object concatenated with an empty one is itself, unpacked).
    CREATE FUNCTION plinth_body_size(b jsonb) RETURNS bigint LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $fn$
      SELECT pg_column_size(CASE WHEN jsonb_typeof(b) = 'object' THEN b || '{}'::jsonb ELSE b END)::bigint
    $fn$;

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
      PERFORM plinth_account(p_tenant, p_resource, 0, plinth_body_size(p_body) - plinth_body_size(old_body));
      INSERT INTO changes (revision, tenant, resource, namespace, name, type, prev_object, prev_revision)
        VALUES (r, p_tenant, p_resource, p_namespace, p_name, 'M', old_body, old_rev);
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
      PERFORM plinth_account(p_tenant, p_resource, -1, -plinth_body_size(old_body));
      PERFORM plinth_account_quota(p_tenant, p_namespace, p_resource, -1);
      IF p_resource = 'resourcequotas' THEN
        DELETE FROM quota_usage q WHERE q.tenant = p_tenant AND q.namespace = p_namespace AND q.quota = p_name;
      END IF;
      INSERT INTO changes (revision, tenant, resource, namespace, name, type, prev_object, prev_revision)
        VALUES (r, p_tenant, p_resource, p_namespace, p_name, 'D', old_body, old_rev);
      PERFORM pg_notify('plinth_changes', r::text);
      RETURN QUERY SELECT r, old_body;
    END $fn$;

    -- The bytes as measured from now on (as migration 0004 recounted them in its own measure).
    UPDATE tenant_usage t SET bytes = coalesce(s.bytes, 0)
      FROM (
        SELECT o.tenant, k.key, sum(plinth_body_size(o.body)) AS bytes
        FROM objects o CROSS JOIN LATERAL unnest(plinth_usage_keys(o.resource)) AS k(key)
        GROUP BY o.tenant, k.key
      ) s
      WHERE s.tenant = t.tenant AND s.key = t.usage_key;
    UPDATE tenant_usage SET bytes = 0 WHERE objects = 0 AND bytes <> 0;

    -- True while plinth_write_batch runs (it hands out revisions from this setting under the counter's lock).
    CREATE FUNCTION plinth_in_batch() RETURNS boolean LANGUAGE sql STABLE AS $fn$
      SELECT coalesce(current_setting('plinth.next_revision', true), '') <> ''
    $fn$;

    CREATE FUNCTION plinth_check_tenant(p_tenant text) RETURNS void LANGUAGE plpgsql AS $fn$
    BEGIN
      IF current_setting('plinth.checked_tenant', true) = p_tenant THEN RETURN; END IF;
      PERFORM plinth_check_tenant_now(p_tenant);
      IF plinth_in_batch() THEN PERFORM set_config('plinth.checked_tenant', p_tenant, true); END IF;
    END $fn$;

    -- In a batch: true when p_tenant has no limit on any usage key (looked up once per batch).
    CREATE FUNCTION plinth_unlimited_in_batch(p_tenant text) RETURNS boolean LANGUAGE plpgsql AS $fn$
    DECLARE known text := current_setting('plinth.tenant_limits', true); limited boolean;
    BEGIN
      IF known = p_tenant || ':none' THEN RETURN true; END IF;
      IF known = p_tenant || ':some' THEN RETURN false; END IF;
      limited := EXISTS (SELECT 1 FROM tenant_usage u WHERE u.tenant = p_tenant AND (u.max_objects IS NOT NULL OR u.max_bytes IS NOT NULL));
      PERFORM set_config('plinth.tenant_limits', p_tenant || CASE WHEN limited THEN ':some' ELSE ':none' END, true);
      RETURN NOT limited;
    END $fn$;

    CREATE FUNCTION plinth_account(p_tenant text, p_resource text, d_objects bigint, d_bytes bigint) RETURNS void LANGUAGE plpgsql AS $fn$
    BEGIN
      IF d_objects = 0 AND d_bytes = 0 THEN RETURN; END IF;
      IF plinth_in_batch() AND plinth_unlimited_in_batch(p_tenant) THEN
        -- Names hold no tab or newline (object names and resources are DNS names).
        PERFORM set_config('plinth.usage', coalesce(current_setting('plinth.usage', true), '') || format(E'%s\t%s\t%s\t%s\n', p_tenant, p_resource, d_objects, d_bytes), true);
        RETURN;
      END IF;
      PERFORM plinth_account_now(p_tenant, p_resource, d_objects, d_bytes);
    END $fn$;

    CREATE FUNCTION plinth_account_quota(p_tenant text, p_namespace text, p_resource text, d_objects bigint) RETURNS void LANGUAGE plpgsql AS $fn$
    DECLARE here text := '|' || p_tenant || '/' || p_namespace || '|';
    BEGIN
      IF p_namespace = '' THEN RETURN; END IF;
      IF plinth_in_batch() THEN
        IF position(here IN coalesce(current_setting('plinth.quota_free', true), '')) > 0 THEN RETURN; END IF;
        IF NOT EXISTS (SELECT 1 FROM quota_usage q WHERE q.tenant = p_tenant AND q.namespace = p_namespace) THEN
          PERFORM set_config('plinth.quota_free', coalesce(current_setting('plinth.quota_free', true), '') || here, true);
          RETURN;
        END IF;
      END IF;
      PERFORM plinth_account_quota_now(p_tenant, p_namespace, p_resource, d_objects);
    END $fn$;

    -- Adds the usage the batch counted to the usage rows (creating missing ones), and forgets what it remembered.
    CREATE FUNCTION plinth_flush_batch_counts() RETURNS void LANGUAGE plpgsql AS $fn$
    DECLARE lines text := nullif(current_setting('plinth.usage', true), '');
    BEGIN
      IF lines IS NOT NULL THEN
        INSERT INTO tenant_usage AS t (tenant, usage_key, objects, bytes)
          SELECT w.tenant, k.key, sum(w.objects), sum(w.bytes)
          FROM (
            SELECT split_part(l, E'\t', 1) AS tenant, split_part(l, E'\t', 2) AS resource,
              split_part(l, E'\t', 3)::bigint AS objects, split_part(l, E'\t', 4)::bigint AS bytes
            FROM string_to_table(rtrim(lines, E'\n'), E'\n') AS l
          ) w CROSS JOIN LATERAL unnest(plinth_usage_keys(w.resource)) AS k(key)
          GROUP BY w.tenant, k.key
          ORDER BY w.tenant, k.key
          ON CONFLICT (tenant, usage_key) DO UPDATE SET objects = t.objects + EXCLUDED.objects, bytes = t.bytes + EXCLUDED.bytes;
      END IF;
      PERFORM set_config('plinth.usage', '', true);
      PERFORM set_config('plinth.checked_tenant', '', true);
      PERFORM set_config('plinth.tenant_limits', '', true);
      PERFORM set_config('plinth.quota_free', '', true);
    END $fn$;

    -- 0008's batch (renamed above), then its counts.
    CREATE FUNCTION plinth_write_batch(p_ops jsonb) RETURNS jsonb LANGUAGE plpgsql AS $fn$
    DECLARE results jsonb;
    BEGIN
      results := plinth_write_batch_writes(p_ops);
      PERFORM plinth_flush_batch_counts();
      RETURN results;
    END $fn$;
  `.execute(db);
}

/** Back to 0019: every write of a batch checks its tenant and counts its usage and quota itself, bytes as before (no recount). */
export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP FUNCTION plinth_write_batch(jsonb);
    DROP FUNCTION plinth_flush_batch_counts();
    DROP FUNCTION plinth_account_quota(text, text, text, bigint);
    DROP FUNCTION plinth_account(text, text, bigint, bigint);
    DROP FUNCTION plinth_unlimited_in_batch(text);
    DROP FUNCTION plinth_check_tenant(text);
    DROP FUNCTION plinth_in_batch();
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
      INSERT INTO changes (revision, tenant, resource, namespace, name, type, prev_object, prev_revision)
        VALUES (r, p_tenant, p_resource, p_namespace, p_name, 'M', old_body, old_rev);
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
      INSERT INTO changes (revision, tenant, resource, namespace, name, type, prev_object, prev_revision)
        VALUES (r, p_tenant, p_resource, p_namespace, p_name, 'D', old_body, old_rev);
      PERFORM pg_notify('plinth_changes', r::text);
      RETURN QUERY SELECT r, old_body;
    END $fn$;
    DROP FUNCTION plinth_body_size(jsonb);
    ALTER FUNCTION plinth_check_tenant_now(text) RENAME TO plinth_check_tenant;
    ALTER FUNCTION plinth_account_now(text, text, bigint, bigint) RENAME TO plinth_account;
    ALTER FUNCTION plinth_account_quota_now(text, text, text, bigint) RENAME TO plinth_account_quota;
    ALTER FUNCTION plinth_write_batch_writes(jsonb) RENAME TO plinth_write_batch;
  `.execute(db);
}
