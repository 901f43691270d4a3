import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { ChangeLogRepository, createDatabase, type DB, type ListQuery, migrateToLatest, ObjectListRepository, ObjectStoreRepository } from '@plinth/storage';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { migrations } from '../../migrations/index.js';

interface Statement {
  sql: string;
  parameters: readonly unknown[];
}

/**
 * JIT compilation costs 0.1-0.8 s a statement on a PostgreSQL built with
 * LLVM (Debian's postgresql-15, most managed ones; the embedded one is
 * built without it), and two things made Plinth's millisecond statements
 * pass its cost marks (issue 46): a continue page reads the state at its
 * first page's revision with planner node types disabled (PastStateReader;
 * before PostgreSQL 18 a disabled node the plan cannot avoid adds 1e10 to
 * its cost), and the single-row tables revision_counter and
 * compaction_state, never analysed, were estimated at 2,140 rows each,
 * which made a watch's catch-up batch cost millions. Migration 0023
 * analyses them and turns JIT off for the database's sessions where it
 * may; the reader turns it off for its own transactions in any case.
 *
 * The tests below run with JIT forced on (a database whose owner could not
 * turn it off), replay every statement of a read in order, in one
 * REPEATABLE READ transaction as the reader runs them, and ask PostgreSQL
 * (EXPLAIN) whether it would compile any. They are skipped where JIT is
 * not available (the embedded PostgreSQL); `PLINTH_TEST_PG_BIN=
 * /usr/lib/postgresql/15/bin` runs them, and npm test runs the storage
 * suites there too when it is installed.
 */
describe('statements are never JIT-compiled', () => {
  let tdb: TestDatabase;
  let db: Kysely<DB>;
  let pool: pg.Pool;
  let recorded: Statement[] = [];
  let lists: ObjectListRepository;
  let changes: ChangeLogRepository;
  let jit = false;
  /** The revision before the test's writes. */
  let start = 0;

  before(async () => {
    tdb = await createTestDatabase('list_past_jit');
    db = createDatabase({ connectionString: tdb.url, maxConnections: 2 });
    const objects = new ObjectStoreRepository(db);
    start = await objects.currentRevision();
    for (const ns of ['a', 'b']) for (let i = 0; i < 12; i++) await objects.create({ tenant: 'default', resource: 'configmaps', namespace: ns, name: `cm-${i}` }, { metadata: { name: `cm-${i}`, namespace: ns, labels: { app: i % 2 ? 'x' : 'y' } } });
    pool = new pg.Pool({ connectionString: tdb.url, max: 2, options: '-c jit=on' });
    const recording = new Kysely<DB>({
      dialect: new PostgresDialect({ pool }),
      log: (event) => {
        if (event.level === 'query') recorded.push({ sql: event.query.sql, parameters: event.query.parameters });
      },
    });
    lists = new ObjectListRepository(recording);
    changes = new ChangeLogRepository(recording);
    const { rows } = await pool.query<{ jit: boolean }>("SELECT pg_jit_available() AND current_setting('jit')::boolean AS jit");
    jit = rows[0].jit;
  });
  after(async () => {
    await pool?.end();
    await db?.destroy();
    await tdb?.drop();
  });

  /** The statements of `read` that PostgreSQL would JIT-compile, replayed as `read` ran them. */
  async function compiled(read: () => Promise<unknown>): Promise<string[]> {
    recorded = [];
    await read();
    const statements = recorded.filter((s) => !/^\s*(begin|commit|rollback|start transaction|set transaction)\b/i.test(s.sql));
    assert.ok(statements.length > 0, 'the read ran statements');
    const client = await pool.connect();
    const out: string[] = [];
    try {
      await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
      for (const s of statements) {
        // The reader's own settings (set_config … true) hold for the statements after them, as in the read.
        if (/set_config\(/.test(s.sql)) {
          await client.query(s.sql, [...s.parameters]);
          continue;
        }
        const { rows } = await client.query(`EXPLAIN (FORMAT JSON) ${s.sql}`, [...s.parameters]);
        const plan = (rows[0] as { 'QUERY PLAN': Array<Record<string, unknown>> })['QUERY PLAN'][0];
        if (plan.JIT) out.push(s.sql.replace(/\s+/g, ' ').slice(0, 200));
      }
    } finally {
      await client.query('ROLLBACK');
      client.release();
    }
    return out;
  }

  const cases: Array<[string, Pick<ListQuery, 'namespace' | 'labelRequirements'>]> = [
    ['one namespace', { namespace: 'a' }],
    ['all namespaces', {}],
    ['a label selector', { namespace: 'a', labelRequirements: [{ key: 'app', operator: 'Equals', values: ['x'] }] }],
  ];
  for (const [label, q] of cases) {
    it(`${label}: neither the first page nor a continue page at its revision`, async (t) => {
      if (!jit) return t.skip('this PostgreSQL has no JIT (the embedded one is built without LLVM)');
      const query: ListQuery = { tenant: 'default', resource: 'configmaps', ...q, limit: 4, countRemaining: true };
      let first!: Awaited<ReturnType<ObjectListRepository['list']>>;
      assert.deepEqual(await compiled(async () => (first = await lists.list(query))), [], 'first page');
      assert.ok(first.next, 'the list has a second page');
      assert.deepEqual(await compiled(() => lists.list({ ...query, after: first.next, atRevision: first.revision })), [], 'continue page');
    });
  }

  it('a watch catch-up batch of a resource, a namespace, one object', async (t) => {
    if (!jit) return t.skip('this PostgreSQL has no JIT (the embedded one is built without LLVM)');
    for (const scope of [{ tenant: 'default', resource: 'configmaps' }, { tenant: 'default', resource: 'configmaps', namespace: 'a' }, { tenant: 'default', resource: 'configmaps', namespace: 'a', name: 'cm-1' }]) {
      assert.deepEqual(await compiled(() => changes.changesInScope(start, 2, scope)), [], JSON.stringify(scope));
    }
  });

  it('a freshly migrated database defaults its sessions to jit = off (migration 0023)', async () => {
    const admin = new pg.Client({ connectionString: process.env.PLINTH_TEST_PG_ADMIN_URL });
    await admin.connect();
    const name = `${tdb.name}_fresh`;
    try {
      await admin.query(`CREATE DATABASE "${name}"`);
      const u = new URL(tdb.url);
      u.pathname = `/${name}`;
      const fresh = createDatabase({ connectionString: u.toString(), maxConnections: 1 });
      try {
        await migrateToLatest(fresh, migrations);
      } finally {
        await fresh.destroy();
      }
      const c = new pg.Client({ connectionString: u.toString() });
      await c.connect();
      try {
        assert.equal((await c.query("SELECT current_setting('jit') AS jit")).rows[0].jit, 'off');
        const { rows } = await c.query("SELECT relname, reltuples FROM pg_class WHERE relname IN ('revision_counter', 'compaction_state') ORDER BY relname");
        assert.deepEqual(rows, [{ relname: 'compaction_state', reltuples: 1 }, { relname: 'revision_counter', reltuples: 1 }], 'the single-row tables are analysed');
      } finally {
        await c.end();
      }
    } finally {
      await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await admin.end();
    }
  });
});
