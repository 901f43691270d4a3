import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Kysely, sql } from 'kysely';
import pg from 'pg';
import { ChangeLogRepository, createDatabase, type DB, ObjectStoreRepository, TenantRepository } from '@plinth/storage';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { eventually } from '../support/eventually.js';

/** `n` distinct labels, and `app: web`. */
function labels(n: number): Record<string, string> {
  const out: Record<string, string> = { app: 'web' };
  for (let i = 0; i < n; i++) out[`k${i}`] = `v${i % 100}`;
  return out;
}

const heavy = (name: string, n = 20_000) => ({ metadata: { name, namespace: 'default', labels: labels(n) } });

/**
 * A label-heavy write (migration 0025) stores its row and its GIN entries
 * before it takes the shard's revision counter, no writer merges a GIN
 * pending list while holding it, and the lists are merged outside any write.
 */
describe('label-heavy writes outside the revision counter', { timeout: 170_000 }, () => {
  let tdb: TestDatabase;
  let db: Kysely<DB>;
  let holder: pg.Client;
  let writer: pg.Client;
  let other: pg.Client;

  before(async () => {
    tdb = await createTestDatabase('label_heavy');
    db = createDatabase({ connectionString: tdb.url, maxConnections: 4 });
    await sql`CREATE EXTENSION IF NOT EXISTS pgstattuple`.execute(db);
    await new TenantRepository(db).ensure('other');
    holder = new pg.Client({ connectionString: tdb.url });
    writer = new pg.Client({ connectionString: tdb.url });
    other = new pg.Client({ connectionString: tdb.url });
    await Promise.all([holder.connect(), writer.connect(), other.connect()]);
  });
  after(async () => {
    await Promise.all([holder?.end(), writer?.end(), other?.end()]);
    await db?.destroy();
    await tdb?.drop();
  });

  /** Heap tuples with entries in the pending list of `index` (committed or not). */
  async function pendingTuples(index: string): Promise<number> {
    const { rows } = await sql<{ n: string }>`SELECT pending_tuples AS n FROM pgstatginindex(${index}::regclass)`.execute(db);
    return Number(rows[0].n);
  }
  async function pendingPages(): Promise<number> {
    const { rows } = await sql<{ n: string }>`SELECT sum(pending_pages) AS n FROM unnest(ARRAY['objects_labels_idx', 'changes_labels_idx']) i, pgstatginindex(i::regclass)`.execute(db);
    return Number(rows[0].n);
  }
  /** Resolves once `client`'s backend waits for a lock of `type` ('advisory', 'tuple', 'transactionid'). */
  async function waitsFor(client: pg.Client, type: string[]): Promise<void> {
    const pid = (client as unknown as { processID: number }).processID;
    await eventually(async () => {
      const { rows } = await sql<{ e: string | null }>`SELECT wait_event AS e FROM pg_stat_activity WHERE pid = ${pid}`.execute(db);
      return type.includes(rows[0]?.e ?? '');
    }, { timeoutMs: 30_000, message: `backend ${pid} waits for ${type.join('/')}` });
  }

  it("indexes a label-heavy create's labels before it takes the revision counter, then gets the next revision", async () => {
    const before = await pendingTuples('objects_labels_idx');
    await holder.query('BEGIN');
    const { rows } = await holder.query<{ value: string }>('SELECT value FROM revision_counter WHERE id = 1 FOR UPDATE');
    const counter = Number(rows[0].value);
    const create = writer.query<{ r: string }>("SELECT plinth_create('default', 'configmaps', 'default', 'early', $1::jsonb) AS r", [JSON.stringify(heavy('early'))]);
    await waitsFor(writer, ['tuple', 'transactionid']);
    // Its row's entries are in the index while it waits for the counter; a plain create's would not be.
    assert.equal(await pendingTuples('objects_labels_idx'), before + 1);
    await holder.query('COMMIT');
    const r = Number((await create).rows[0].r);
    assert.equal(r, counter + 1);
    const { rows: stored } = await sql<{ revision: string; n: string }>`
      SELECT o.revision, (SELECT count(*) FROM objects x WHERE plinth_labels(x.body) @> '{"k7": "v7", "app": "web"}') AS n
      FROM objects o WHERE o.tenant = 'default' AND o.name = 'early'`.execute(db);
    assert.deepEqual(stored.map((s) => [Number(s.revision), Number(s.n)]), [[r, 1]]);
    const { rows: change } = await sql<{ labels: unknown }>`SELECT labels FROM changes WHERE revision = ${r}`.execute(db);
    assert.deepEqual(change[0].labels, [{ s: 'default configmaps', h: true }], 'a heavy change carries its scope marker, not 20,001 labels');
  });

  it('makes a batched create of the same key wait for the key lock, not the counter, and answers it AlreadyExists', async () => {
    await holder.query('BEGIN');
    await holder.query('SELECT value FROM revision_counter WHERE id = 1 FOR UPDATE');
    const create = writer.query("SELECT plinth_create('default', 'configmaps', 'default', 'raced', $1::jsonb)", [JSON.stringify(heavy('raced'))]);
    await waitsFor(writer, ['tuple', 'transactionid']);
    const ops = [
      { op: 'c', t: 'default', r: 'configmaps', s: 'default', n: 'raced', b: { metadata: { name: 'raced' } } },
      { op: 'c', t: 'default', r: 'configmaps', s: 'default', n: 'beside', b: { metadata: { name: 'beside' } } },
    ];
    const batch = other.query<{ results: Array<{ r?: number; e?: string }> }>('SELECT plinth_write_batch($1::jsonb) AS results', [JSON.stringify(ops)]);
    await waitsFor(other, ['advisory']);
    await holder.query('COMMIT');
    await create;
    const results = (await batch).rows[0].results;
    assert.equal(results[0].e, 'P0409');
    assert.ok(typeof results[1].r === 'number', JSON.stringify(results));
  });

  it('leaves GIN pending lists to the cleaning: no write merges them, plinth_clean_gin_pending does, one session at a time', async () => {
    // Where an index has no limit of its own, a session's gin_pending_list_limit applies: at 64 kB these writes would
    // merge the lists themselves many times over (each of them while holding the counter).
    await writer.query('SET gin_pending_list_limit = 64');
    const before = await pendingTuples('objects_labels_idx');
    const pagesBefore = await pendingPages();
    for (let i = 0; i < 3; i++) await writer.query("SELECT plinth_create('default', 'configmaps', 'default', $1, $2::jsonb)", [`pile-${i}`, JSON.stringify(heavy(`pile-${i}`, 5_000))]);
    for (let i = 0; i < 20; i++) await writer.query("SELECT plinth_create('other', 'configmaps', 'default', $1, $2::jsonb)", [`plain-${i}`, JSON.stringify({ metadata: { name: `plain-${i}`, labels: { app: 'web' } } })]);
    await writer.query('RESET gin_pending_list_limit');
    assert.equal(await pendingTuples('objects_labels_idx'), before + 23, 'every write only appended to the pending list');
    const piled = await pendingPages();
    assert.ok(piled - pagesBefore > 8, `pending pages ${pagesBefore} → ${piled}: past 64 kB`);
    const found = await sql<{ n: string }>`SELECT count(*) AS n FROM objects WHERE plinth_labels(body) @> '{"k4999": "v99"}' AND name LIKE 'pile-%'`.execute(db);
    assert.equal(Number(found.rows[0].n), 3, 'index scans find entries still pending');

    await other.query('BEGIN');
    const first = await other.query<{ n: string }>('SELECT plinth_clean_gin_pending() AS n');
    assert.ok(Number(first.rows[0].n) >= piled, `cleaned ${first.rows[0].n} pages`);
    const second = await writer.query<{ n: string }>('SELECT plinth_clean_gin_pending() AS n');
    assert.equal(Number(second.rows[0].n), -1, 'a second cleaner skips while one runs');
    await other.query('COMMIT');
    assert.equal(await pendingPages(), 0);
    const still = await sql<{ n: string }>`SELECT count(*) AS n FROM objects WHERE plinth_labels(body) @> '{"k4999": "v99"}' AND name LIKE 'pile-%'`.execute(db);
    assert.equal(Number(still.rows[0].n), 3);
  });

  it('cleans the pending lists from the write batcher after its writes, and sends a label-heavy write alone', async () => {
    const sizes: number[] = [];
    const objects = new ObjectStoreRepository(db, { ginCleanIntervalMs: 50, onBatch: (n) => sizes.push(n) });
    const writes = [objects.create({ tenant: 'other', resource: 'configmaps', namespace: 'default', name: 'first' }, { metadata: { name: 'first' } })];
    writes.push(objects.create({ tenant: 'other', resource: 'configmaps', namespace: 'default', name: 'batched' }, heavy('batched', 2_000)));
    for (let i = 0; i < 3; i++) writes.push(objects.create({ tenant: 'other', resource: 'configmaps', namespace: 'default', name: `after-${i}` }, { metadata: { name: `after-${i}` } }));
    const revisions = (await Promise.all(writes)).map((w) => w.revision);
    assert.deepEqual([...revisions].sort((a, b) => a - b), revisions, 'the writes keep their order');
    assert.deepEqual(sizes, [1, 1, 3]);
    await eventually(async () => (await pendingPages()) === 0, { timeoutMs: 20_000, message: 'the batcher cleaned the pending lists' });
  });

  it("finds a heavy object's changes in a label-selected catch-up of its scope (its marker), and filters nothing else in", async () => {
    const objects = new ObjectStoreRepository(db);
    const start = await objects.currentRevision();
    await objects.create({ tenant: 'other', resource: 'secrets', namespace: 'default', name: 'big' }, heavy('big', 2_000));
    await objects.create({ tenant: 'other', resource: 'secrets', namespace: 'default', name: 'web' }, { metadata: { name: 'web', labels: { app: 'web' } } });
    await objects.create({ tenant: 'other', resource: 'secrets', namespace: 'default', name: 'db' }, { metadata: { name: 'db', labels: { app: 'db' } } });
    const { events, indexed } = await new ChangeLogRepository(db).changesInScope(start, 100, { tenant: 'other', resource: 'secrets' }, [{ key: 'app', operator: 'In', values: ['web'] }]);
    assert.equal(indexed, true);
    assert.deepEqual(events.map((e) => e.key.name), ['big', 'web']);
  });
});
