import { type Kysely, sql } from 'kysely';

/**
 * The change log stops storing copies of bodies that are stored elsewhere,
 * and its indexes key on hashes instead of the text of the keys.
 *
 * Before, every change row held the new state (`object`) and, for updates
 * and deletes, the state before (`prev_object`): a create stored its body
 * twice (in `objects` and in its change), an update three times, a delete
 * its last body twice in one row. Now a change stores only `prev_object`
 * (updates and deletes), and `object` stays NULL. Every body version is
 * still stored exactly once: the current one in `objects`, each earlier one
 * as the `prev_object` of the change that replaced it. So the new state of a
 * change at revision R is
 *   - for a delete, its own `prev_object` (the last state);
 *   - otherwise the current row of its key if that row's revision is R;
 *   - otherwise the `prev_object` of the change of its key whose
 *     `prev_revision` is R (the change that replaced it).
 * The replacing change is always kept as long as R is: compaction deletes
 * in revision order. Rows written before this migration keep their
 * `object`, which readers use when it is there. See
 * ChangeLogRepository (libs/storage) for the read.
 *
 * The three indexes that led with the text of (tenant, resource, …) held
 * 115–142 bytes an entry (the resource alone is up to 46 characters, e.g.
 * `rbac.authorization.k8s.io/clusterrolebindings`). Their replacements key
 * on a 64-bit hash of the same columns (`plinth_hash`), 24–32 bytes an
 * entry; readers compare the hash and then the columns themselves, so a
 * collision costs a row read, never a wrong answer. The scope index keeps
 * the tenant's text first, so purging a tenant's changes stays an index range.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE FUNCTION plinth_hash(a text) RETURNS bigint LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $fn$
      SELECT hashtextextended(a, 0)
    $fn$;
    CREATE FUNCTION plinth_hash(a text, b text, c text) RETURNS bigint LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $fn$
      SELECT hashtextextended(a || '/' || b || '/' || c, 0)
    $fn$;
    CREATE FUNCTION plinth_hash(a text, b text, c text, d text) RETURNS bigint LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $fn$
      SELECT hashtextextended(a || '/' || b || '/' || c || '/' || d, 0)
    $fn$;

    ALTER TABLE changes ALTER COLUMN object DROP NOT NULL;

    -- One tenant's resource in revision order (catch-up of a whole resource; purging a tenant).
    CREATE INDEX changes_tenant_scope_idx ON changes (tenant, plinth_hash(resource), revision);
    -- One namespace of a resource in revision order (catch-up of a namespace).
    CREATE INDEX changes_namespace_hash_idx ON changes (plinth_hash(tenant, resource, namespace), revision);
    -- One object in revision order (catch-up of one name; the change that replaced a state).
    CREATE INDEX changes_key_hash_idx ON changes (plinth_hash(tenant, resource, namespace, name), revision);
    DROP INDEX changes_key_idx;
    DROP INDEX changes_scope_idx;
    DROP INDEX changes_namespace_idx;

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
      INSERT INTO changes (revision, tenant, resource, namespace, name, type)
        VALUES (r, p_tenant, p_resource, p_namespace, p_name, 'A');
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
  `.execute(db);
}

/** Back to 0009: every change row gets its `object` again (derived as above), the text indexes and write functions return. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    UPDATE changes c SET object = CASE WHEN c.type = 'D' THEN c.prev_object ELSE coalesce(
        (SELECT o.body FROM objects o WHERE o.tenant = c.tenant AND o.resource = c.resource AND o.namespace = c.namespace AND o.name = c.name AND o.revision = c.revision),
        (SELECT n.prev_object FROM changes n WHERE plinth_hash(n.tenant, n.resource, n.namespace, n.name) = plinth_hash(c.tenant, c.resource, c.namespace, c.name)
          AND n.tenant = c.tenant AND n.resource = c.resource AND n.namespace = c.namespace AND n.name = c.name AND n.prev_revision = c.revision),
        '{}'::jsonb) END
      WHERE c.object IS NULL;
    ALTER TABLE changes ALTER COLUMN object SET NOT NULL;

    CREATE INDEX changes_key_idx ON changes (tenant, resource, namespace, name, revision);
    CREATE INDEX changes_scope_idx ON changes (tenant, resource, revision);
    CREATE INDEX changes_namespace_idx ON changes (tenant, resource, namespace, revision);
    DROP INDEX changes_tenant_scope_idx;
    DROP INDEX changes_namespace_hash_idx;
    DROP INDEX changes_key_hash_idx;

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
      PERFORM plinth_account_quota(p_tenant, p_namespace, p_resource, -1);
      IF p_resource = 'resourcequotas' THEN
        DELETE FROM quota_usage q WHERE q.tenant = p_tenant AND q.namespace = p_namespace AND q.quota = p_name;
      END IF;
      INSERT INTO changes (revision, tenant, resource, namespace, name, type, object, prev_object, prev_revision)
        VALUES (r, p_tenant, p_resource, p_namespace, p_name, 'D', old_body, old_body, old_rev);
      PERFORM pg_notify('plinth_changes', r::text);
      RETURN QUERY SELECT r, old_body;
    END $fn$;

    DROP FUNCTION plinth_hash(text, text, text, text);
    DROP FUNCTION plinth_hash(text, text, text);
    DROP FUNCTION plinth_hash(text);
  `.execute(db);
}
