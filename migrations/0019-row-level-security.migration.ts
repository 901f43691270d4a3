import { type Kysely, sql } from 'kysely';

/**
 * Row-level security between tenants.
 *
 * The request path runs its statements as the role `plinth_request` with
 * the session setting `plinth.tenant` naming the tenant it addresses
 * (libs/storage/src/tenant-scope.ts). A policy on every table holding
 * tenant data shows that role, and lets it write, only that tenant's rows,
 * so a statement that gets its `WHERE tenant = …` wrong returns nothing of
 * anyone else. With no tenant set it sees no rows at all. The tables' owner
 * (the role that runs the migrations and the platform's own sweeps) is not
 * bound by the policies.
 *
 * The role is cluster-wide and shared by every Plinth database of the
 * server; creating it needs CREATEROLE (a superuser, as the embedded and
 * docker-compose PostgreSQL are, has it). Membership lets the connecting
 * role switch to it with SET ROLE.
 *
 * Leakproof operators: PostgreSQL applies a policy before any condition of
 * the query whose functions are not marked leakproof, and such conditions
 * then cannot use an index. The label selector (`@>`, `?` on jsonb), the
 * hashed key columns of the change log and the uid lookup use functions
 * PostgreSQL has not marked, so under the policies they would read every
 * row of the tenant. They raise no error that depends on their arguments'
 * content, and every statement they appear in is the platform's own SQL,
 * not a tenant's, so marking them leakproof in this database (pg_proc is
 * per database) gives nothing away. A COALESCE counts as leaky whatever it
 * holds, so the labels of a selector move into `plinth_labels(body)`, a
 * function PostgreSQL does not inline, marked leakproof too, with the GIN
 * index on it. Only a superuser may mark them: on a
 * server where the migrating role is not one, the policies still hold and
 * those reads are slower (docs/hardening.md).
 */
const TENANT_TABLES = ['objects', 'changes', 'tenant_usage', 'quota_usage'];
const LEAKPROOF = [
  'jsonb_contains(jsonb, jsonb)',
  'jsonb_exists(jsonb, text)',
  'jsonb_object_field(jsonb, text)',
  'jsonb_object_field_text(jsonb, text)',
  'hashtextextended(text, bigint)',
  'textcat(text, text)',
];

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    DO $do$ BEGIN
      IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'plinth_request') THEN
        CREATE ROLE plinth_request NOLOGIN NOINHERIT;
      END IF;
      IF NOT pg_has_role(current_user, 'plinth_request', 'MEMBER') THEN
        EXECUTE format('GRANT plinth_request TO %I', current_user);
      END IF;
    END $do$;
    GRANT USAGE ON SCHEMA public TO plinth_request;
    -- Every table of the schema but the migrator's own bookkeeping; tables of later migrations by default.
    DO $do$ DECLARE t text; BEGIN
      FOR t IN SELECT tablename FROM pg_tables WHERE schemaname = 'public' AND tablename NOT LIKE 'kysely\_%' LOOP
        EXECUTE format('GRANT SELECT, INSERT, UPDATE, DELETE ON %I TO plinth_request', t);
      END LOOP;
    END $do$;
    ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO plinth_request;
    -- The durability barrier emits a WAL message, which needs the owner's rights, not the request role's.
    ALTER FUNCTION plinth_flush() SECURITY DEFINER SET search_path = pg_catalog, public;
    -- The labels a selector reads, as a function PostgreSQL does not inline (a COALESCE in the condition would
    -- count as leaky under the policies and keep the GIN index out of label-selected lists), and its index.
    CREATE FUNCTION plinth_labels(body jsonb) RETURNS jsonb LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $fn$
    BEGIN
      RETURN coalesce(body -> 'metadata' -> 'labels', '{}'::jsonb);
    END
    $fn$;
    CREATE INDEX objects_labels_idx ON objects USING gin (plinth_labels(body));
    DROP INDEX objects_body_labels_idx;
    ALTER TABLE tenants ENABLE ROW LEVEL SECURITY;
    CREATE POLICY plinth_tenant ON tenants USING (name = current_setting('plinth.tenant', true));
  `.execute(db);
  for (const table of TENANT_TABLES) {
    await sql`
      ALTER TABLE ${sql.table(table)} ENABLE ROW LEVEL SECURITY;
      CREATE POLICY plinth_tenant ON ${sql.table(table)} USING (tenant = current_setting('plinth.tenant', true));
    `.execute(db);
  }
  const marks = [...LEAKPROOF.map((f) => `ALTER FUNCTION pg_catalog.${f} LEAKPROOF;`), 'ALTER FUNCTION plinth_labels(jsonb) LEAKPROOF;'].join('\n');
  await sql`
    DO $do$ BEGIN
      IF (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN
        ${sql.raw(marks)}
      END IF;
    END $do$;
  `.execute(db);
}

/** Policies off and gone; the role and the leakproof marks stay (other databases of the server may use them). */
export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['tenants', ...TENANT_TABLES]) {
    await sql`
      DROP POLICY plinth_tenant ON ${sql.table(table)};
      ALTER TABLE ${sql.table(table)} DISABLE ROW LEVEL SECURITY;
    `.execute(db);
  }
  await sql`
    ALTER FUNCTION plinth_flush() SECURITY INVOKER RESET search_path;
    CREATE INDEX objects_body_labels_idx ON objects USING gin ((coalesce(body -> 'metadata' -> 'labels', '{}'::jsonb)));
    DROP INDEX objects_labels_idx;
    DROP FUNCTION plinth_labels(jsonb);
  `.execute(db);
}
