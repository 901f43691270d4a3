import { type Kysely, sql } from 'kysely';

/**
 * Tenant lifecycle: a tenant (logical cluster) is Active or Terminating, and
 * remembers the revision at which it was created.
 *
 * Every write function refuses (SQLSTATE P0403) a tenant that is missing or
 * Terminating. The check runs after the write has taken the revision
 * counter's row lock, and marking a tenant Terminating takes that same lock
 * (see plinth_mark_tenant_terminating): a write that got the counter before
 * the mark has committed before the mark can proceed, and every later write
 * sees the mark. So once the mark commits, no row of the tenant can appear
 * any more, and the deletion job can remove them all in batches without a
 * row slipping in behind it (nor after the tenants row is gone, which a
 * replica's stale tenant cache could otherwise allow). The check is one
 * primary-key lookup in a small table.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE tenants
      ADD COLUMN phase text NOT NULL DEFAULT 'Active' CHECK (phase IN ('Active', 'Terminating')),
      ADD COLUMN created_revision bigint NOT NULL DEFAULT 0;

    CREATE FUNCTION plinth_check_tenant(p_tenant text) RETURNS void LANGUAGE plpgsql AS $fn$
    BEGIN
      IF NOT EXISTS (SELECT 1 FROM tenants t WHERE t.name = p_tenant AND t.phase = 'Active') THEN
        RAISE EXCEPTION USING ERRCODE = 'P0403', MESSAGE = 'tenant is not active';
      END IF;
    END $fn$;

    -- Takes the revision counter's lock (without consuming a revision) so that
    -- no write is between its counter lock and its commit, then marks the tenant.
    -- Returns false when the tenant does not exist.
    CREATE FUNCTION plinth_mark_tenant_terminating(p_tenant text) RETURNS boolean LANGUAGE plpgsql AS $fn$
    BEGIN
      PERFORM 1 FROM revision_counter WHERE id = 1 FOR UPDATE;
      UPDATE tenants SET phase = 'Terminating' WHERE name = p_tenant;
      RETURN FOUND;
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
  `.execute(db);
}

/** Restores the write functions of the initial migration and drops the lifecycle columns. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE OR REPLACE FUNCTION plinth_create(p_tenant text, p_resource text, p_namespace text, p_name text, p_body jsonb)
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

    CREATE OR REPLACE FUNCTION plinth_update(p_tenant text, p_resource text, p_namespace text, p_name text, p_body jsonb, p_expected bigint)
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

    CREATE OR REPLACE FUNCTION plinth_delete(p_tenant text, p_resource text, p_namespace text, p_name text, p_expected bigint)
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

    DROP FUNCTION plinth_mark_tenant_terminating;
    DROP FUNCTION plinth_check_tenant;
    ALTER TABLE tenants DROP COLUMN created_revision, DROP COLUMN phase;
  `.execute(db);
}
