import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Kysely, sql } from 'kysely';
import { createDatabase, type DB } from '@plinth/storage';
import { TestPostgres } from '../support/test-postgres.js';
import { ReplicaProcess } from './support/replica-process.js';
import { type LoadOutcome, WriteLoad } from './support/write-load.js';
import { eventually } from '../support/eventually.js';

const NS = 'crash';
const CLIENTS = 24;
const CRASHES = 2;

/** Batches with more than one write sent so far, from the replica's batch size histogram. */
async function multiWriteBatches(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const at = (le: string) => Number(text.split('\n').find((l) => l.startsWith(`plinth_storage_write_batch_size_bucket{le="${le}"} `))?.split(' ')[1] ?? 0);
  return at('+Inf') - at('1');
}

/** Every acknowledged create is there: its object row at the acknowledged revision, and its ADDED change at that revision. */
async function assertAcknowledgedPresent(db: Kysely<DB>, acked: LoadOutcome[]): Promise<void> {
  const { rows } = await sql<{ name: string; obj: number | null; chg: number | null }>`
    SELECT a.name, o.revision AS obj, c.revision AS chg
    FROM unnest(${acked.map((o) => o.name)}::text[]) AS a(name)
    LEFT JOIN objects o ON o.tenant = 'default' AND o.resource = 'configmaps' AND o.namespace = ${NS} AND o.name = a.name
    LEFT JOIN changes c ON c.tenant = 'default' AND c.resource = 'configmaps' AND c.namespace = ${NS} AND c.name = a.name AND c.type = 'A'
  `.execute(db);
  const rv = new Map(acked.map((o) => [o.name, Number(o.resourceVersion)]));
  for (const r of rows) {
    assert.equal(r.obj, rv.get(r.name), `acknowledged ${r.name} (resourceVersion ${rv.get(r.name)}): object row at ${r.obj}`);
    assert.equal(r.chg, rv.get(r.name), `acknowledged ${r.name}: change row at ${r.chg}`);
  }
}

/** No write is half there: object rows and ADDED changes of the namespace pair up one to one, at the same revision. */
async function assertNoHalfWrites(db: Kysely<DB>): Promise<void> {
  const { rows } = await sql<{ name: string; obj: number | null; chg: number | null }>`
    SELECT coalesce(o.name, c.name) AS name, o.revision AS obj, c.revision AS chg
    FROM (SELECT * FROM objects WHERE tenant = 'default' AND resource = 'configmaps' AND namespace = ${NS}) o
    FULL JOIN (SELECT * FROM changes WHERE tenant = 'default' AND resource = 'configmaps' AND namespace = ${NS}) c ON c.name = o.name
    WHERE o.revision IS DISTINCT FROM c.revision
  `.execute(db);
  assert.deepEqual(rows, [], 'object rows without their change row, or changes without their object');
}

/** Committed revisions are contiguous, end at the counter, and the tenant's usage counts match its rows. */
async function assertContiguousAndCounted(db: Kysely<DB>): Promise<void> {
  const { rows } = await sql<{ first: number; last: number; n: number; counter: number }>`
    SELECT min(revision) AS first, max(revision) AS last, count(*)::int AS n, (SELECT value FROM revision_counter) AS counter FROM changes
  `.execute(db);
  const r = rows[0];
  assert.equal(r.last - r.first + 1, r.n, `revisions ${r.first}..${r.last} have holes: ${r.n} changes`);
  assert.equal(r.counter, r.last);
  const usage = await sql<{ counted: number; actual: number }>`
    SELECT (SELECT objects FROM tenant_usage WHERE tenant = 'default' AND usage_key = 'configmaps')::int AS counted,
           (SELECT count(*) FROM objects WHERE tenant = 'default' AND resource = 'configmaps')::int AS actual
  `.execute(db);
  assert.equal(usage.rows[0].counted, usage.rows[0].actual, 'usage accounting disagrees with the rows');
}

// A PostgreSQL of this test's own, SIGKILLed in the middle of batched creates through the API, then restarted.
describe('fault: PostgreSQL killed during batched writes', { timeout: 240_000 }, () => {
  let pg: TestPostgres;
  let replica: ReplicaProcess;

  before(async () => {
    pg = await TestPostgres.start('crash');
    replica = await ReplicaProcess.start({ DATABASE_URL: pg.url, PLINTH_DB_POOL_SIZE: '8', PLINTH_WATCH_POLL_INTERVAL_MS: '300' });
    const res = await fetch(`${replica.url}/api/v1/namespaces`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ metadata: { name: NS } }) });
    assert.equal(res.status, 201, await res.text());
  });
  after(async () => {
    await replica?.kill().catch(() => undefined);
    await pg?.close();
  });

  it('keeps every acknowledged write and leaves no unacknowledged write half there, revisions contiguous', async () => {
    const load = new WriteLoad([replica.url], NS, CLIENTS);
    try {
      for (let crash = 1; crash <= CRASHES; crash++) {
        const acked = () => load.outcomes.filter((o) => o.status === 201).length;
        const target = acked() + 150;
        await eventually(() => acked() >= target, { timeoutMs: 60_000, message: `writes succeed before crash ${crash}` });
        assert.ok((await multiWriteBatches(replica.url)) > 0, 'the load formed no batch of more than one write');
        await pg.kill();
        const down = Date.now();
        await eventually(() => load.since(down).some((o) => o.status >= 500), { timeoutMs: 30_000, message: 'in-flight writes fail while PostgreSQL is down' });
        await pg.restart();
        await eventually(() => replica.ready(), { timeoutMs: 60_000, message: 'the replica is ready again' });
      }
      const back = Date.now();
      await eventually(() => load.since(back).some((o) => o.status === 201), { timeoutMs: 60_000, message: 'writes succeed after the last restart' });
    } finally {
      await load.stop();
    }
    assert.ok(replica.alive, `the replica exited: ${replica.output}`);
    const acked = load.outcomes.filter((o) => o.status === 201);
    const failed = load.outcomes.filter((o) => o.status !== 201);
    assert.ok(failed.length > 0, 'no write was in flight at a crash');
    const db = createDatabase({ connectionString: pg.url, maxConnections: 1 });
    try {
      await assertAcknowledgedPresent(db, acked);
      await assertNoHalfWrites(db);
      await assertContiguousAndCounted(db);
    } finally {
      await db.destroy();
    }
  });
});
