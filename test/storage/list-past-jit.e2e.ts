import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { createDatabase, type DB, type ListQuery, ObjectListRepository, ObjectStoreRepository } from '@plinth/storage';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';

interface Statement {
  sql: string;
  parameters: readonly unknown[];
}

/**
 * A continue page reads the state at its first page's revision with some
 * planner node types disabled (PastStateReader). Before PostgreSQL 18 a
 * disabled node the plan cannot avoid adds 1e10 to its estimated cost, past
 * every jit_*_above_cost: on a server built with LLVM (Debian's
 * postgresql-15, most managed ones) each such statement was JIT-compiled,
 * 0.4-0.8 s for a statement that runs in under a millisecond (issue 46).
 * This replays every statement of a first and of a continue page, in order
 * and in one REPEATABLE READ transaction as the reader runs them, and asks
 * PostgreSQL (EXPLAIN) whether it would compile any. Only meaningful where
 * JIT is available (`PLINTH_TEST_PG_BIN=/usr/lib/postgresql/15/bin`; npm test
 * runs the storage suites there too when it is installed); skipped on the
 * embedded PostgreSQL, which is built without it.
 */
describe('list pages are never JIT-compiled', () => {
  let tdb: TestDatabase;
  let db: Kysely<DB>;
  let pool: pg.Pool;
  let recorded: Statement[] = [];
  let lists: ObjectListRepository;
  let jit = false;

  before(async () => {
    tdb = await createTestDatabase('list_past_jit');
    db = createDatabase({ connectionString: tdb.url, maxConnections: 2 });
    const objects = new ObjectStoreRepository(db);
    for (const ns of ['a', 'b']) for (let i = 0; i < 12; i++) await objects.create({ tenant: 'default', resource: 'configmaps', namespace: ns, name: `cm-${i}` }, { metadata: { name: `cm-${i}`, namespace: ns, labels: { app: i % 2 ? 'x' : 'y' } } });
    pool = new pg.Pool({ connectionString: tdb.url, max: 2 });
    const recording = new Kysely<DB>({
      dialect: new PostgresDialect({ pool }),
      log: (event) => {
        if (event.level === 'query') recorded.push({ sql: event.query.sql, parameters: event.query.parameters });
      },
    });
    lists = new ObjectListRepository(recording);
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
});
