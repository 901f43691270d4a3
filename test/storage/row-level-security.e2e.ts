import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Kysely, sql } from 'kysely';
import { createDatabase, type DB, type ObjectKey, ObjectListRepository, ObjectStoreRepository, REQUEST_ROLE, singleShard, TenantRepository, tenantDb, tenantScoped } from '@plinth/storage';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';

const key = (tenant: string, name: string): ObjectKey => ({ tenant, resource: 'secrets', namespace: 'ns', name });
const secret = (name: string, value: string) => ({ metadata: { name, namespace: 'ns', labels: { app: 'db' } }, data: { password: Buffer.from(value).toString('base64') } });

/** Runs `text` (no parameters) on `db`; the rows, or the error's message. */
async function run(db: Kysely<DB>, text: string): Promise<Array<Record<string, unknown>> | string> {
  try {
    return (await sql<Record<string, unknown>>`${sql.raw(text)}`.execute(db)).rows;
  } catch (err) {
    return (err as Error).message;
  }
}

describe('row-level security between tenants (migration 0019)', () => {
  let tdb: TestDatabase;
  let db: Kysely<DB>;
  let acme: Kysely<DB>;

  before(async () => {
    tdb = await createTestDatabase('row_security');
    // One connection: every handle below takes turns on it, so a role or tenant left behind by one would show in the next.
    db = createDatabase({ connectionString: tdb.url, maxConnections: 1 });
    const tenants = new TenantRepository(db);
    const objects = new ObjectStoreRepository(db);
    for (const t of ['acme', 'globex']) {
      await tenants.ensure(t);
      await objects.create(key(t, `${t}-db`), secret(`${t}-db`, `${t}-password`));
      await objects.update(key(t, `${t}-db`), secret(`${t}-db`, `${t}-password-2`), null);
    }
    acme = await tenantDb(singleShard(db), 'acme');
  });
  after(async () => {
    await db?.destroy();
    await tdb?.drop();
  });

  it('a query that forgets its tenant, through the request path handle, sees only the addressed tenant', async () => {
    assert.deepEqual(await run(acme, 'SELECT DISTINCT tenant FROM objects ORDER BY 1'), [{ tenant: 'acme' }]);
    assert.deepEqual(await run(acme, 'SELECT DISTINCT tenant FROM changes ORDER BY 1'), [{ tenant: 'acme' }]);
    assert.deepEqual(await run(acme, 'SELECT name FROM tenants ORDER BY 1'), [{ name: 'acme' }]);
    assert.deepEqual(await run(acme, 'SELECT DISTINCT tenant FROM tenant_usage ORDER BY 1'), [{ tenant: 'acme' }]);
    // The wrong tenant named outright: nothing, not an error that tells it exists.
    assert.deepEqual(await run(acme, `SELECT name FROM objects WHERE tenant = 'globex'`), []);
    assert.deepEqual(await run(acme, `SELECT revision FROM changes WHERE tenant = 'globex'`), []);
  });

  it('the platform handle (sweeps, controllers) still sees every tenant on the same connection', async () => {
    assert.deepEqual(await run(db, 'SELECT DISTINCT tenant FROM objects ORDER BY 1'), [{ tenant: 'acme' }, { tenant: 'globex' }]);
    assert.deepEqual(await run(db, 'SELECT current_user AS u'), [{ u: (await run(db, 'SELECT session_user AS u') as Array<{ u: string }>)[0].u }]);
    // And the next tenant checkout of that connection is that tenant's again.
    assert.deepEqual(await run(tenantScoped(db, 'globex'), 'SELECT DISTINCT tenant FROM objects'), [{ tenant: 'globex' }]);
    assert.deepEqual(await run(acme, 'SELECT current_user AS u'), [{ u: REQUEST_ROLE }]);
  });

  it('writes to another tenant through the request path handle change nothing and insert nothing', async () => {
    assert.deepEqual(await run(acme, `UPDATE objects SET body = '{}'::jsonb WHERE tenant = 'globex' RETURNING name`), []);
    assert.deepEqual(await run(acme, `DELETE FROM changes WHERE tenant = 'globex' RETURNING revision`), []);
    assert.deepEqual(await run(acme, `DELETE FROM tenants WHERE name = 'globex' RETURNING name`), []);
    assert.match(String(await run(acme, `INSERT INTO objects (tenant, resource, namespace, name, revision, body) VALUES ('globex', 'secrets', 'ns', 'planted', 1, '{}')`)), /row-level security/);
    // The write functions are bound too: globex's tenant row is invisible to acme's handle, so its write is refused.
    assert.equal(await run(acme, `SELECT plinth_create('globex', 'secrets', 'ns', 'planted', '{"metadata":{"name":"planted"}}'::jsonb)`), 'tenant is not active');
    const globex = await run(db, `SELECT name FROM objects WHERE tenant = 'globex' ORDER BY name`);
    assert.deepEqual(globex, [{ name: 'globex-db' }]);
    const body = (await run(db, `SELECT body->'data'->>'password' AS p FROM objects WHERE tenant = 'globex'`)) as Array<{ p: string }>;
    assert.equal(Buffer.from(body[0].p, 'base64').toString(), 'globex-password-2');
  });

  it('the repositories serve each tenant its own objects, history and label selections through the policies', async () => {
    const lists = new ObjectListRepository(db);
    for (const t of ['acme', 'globex']) {
      const page = await lists.list({ tenant: t, resource: 'secrets', labelRequirements: [{ key: 'app', operator: 'Equals', values: ['db'] }] });
      assert.deepEqual(page.items.map((i) => i.key.name), [`${t}-db`]);
    }
  });

  it('label selectors still use their GIN index under the policy (leakproof marks of migration 0019)', async () => {
    // Enough rows that the planner prefers the label index to the tenant's key range, as it does with the policy off.
    await sql`
      INSERT INTO objects (tenant, resource, namespace, name, revision, body)
      SELECT 'acme', 'bulk', 'ns', 'b' || i, 1, jsonb_build_object('metadata', jsonb_build_object('labels', jsonb_build_object('pick', CASE WHEN i <= 10 THEN 'yes' ELSE 'no' END)))
      FROM generate_series(1, 5000) i`.execute(db);
    await sql`ANALYZE objects`.execute(db);
    const query = sql`EXPLAIN SELECT name FROM objects WHERE tenant = 'acme' AND resource = 'bulk' AND namespace = 'ns' AND plinth_labels(body) @> '{"pick":"yes"}'`;
    const plan = async (handle: Kysely<DB>) => (await query.execute(handle)).rows.map((r) => Object.values(r as object)[0]).join('\n');
    assert.match(await plan(db), /objects_labels_idx/, 'the owner uses the label index');
    assert.match(await plan(acme), /objects_labels_idx/, 'the request role under the policy uses it too');
    const { rows } = await sql<{ proname: string }>`
      SELECT proname FROM pg_proc WHERE NOT proleakproof AND proname IN ('plinth_labels', 'jsonb_contains', 'jsonb_exists', 'hashtextextended', 'textcat')`.execute(db);
    assert.deepEqual(rows, [], 'functions of label selectors and hashed keys are marked leakproof');
  });

  it('every table with a tenant column has its policy (a new table without one fails here)', async () => {
    const { rows } = await sql<{ table: string; rls: boolean; policies: number }>`
      SELECT c.relname AS table, c.relrowsecurity AS rls, (SELECT count(*)::int FROM pg_policy p WHERE p.polrelid = c.oid) AS policies
      FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p')
        AND (c.relname = 'tenants' OR EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = 'tenant' AND NOT a.attisdropped))
      ORDER BY 1`.execute(db);
    assert.ok(rows.length >= 5, `tables with tenant data: ${rows.map((r) => r.table).join(', ')}`);
    assert.deepEqual(rows.filter((r) => !r.rls || r.policies === 0).map((r) => r.table), []);
  });

  it('with row-level security off (PLINTH_ROW_LEVEL_SECURITY=off) the tenant handle is the platform handle', async () => {
    const off = createDatabase({ connectionString: tdb.url, maxConnections: 1, rowSecurity: false });
    try {
      const handle = await tenantDb(singleShard(off), 'acme');
      assert.equal(handle, off);
      assert.deepEqual(await run(handle, 'SELECT DISTINCT tenant FROM objects ORDER BY 1'), [{ tenant: 'acme' }, { tenant: 'globex' }]);
    } finally {
      await off.destroy();
    }
  });
});
