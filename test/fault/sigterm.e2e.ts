import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ChangeLogRepository, createDatabase } from '@plinth/storage';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { WatchClient } from '../watch/support/watch-client.js';
import { ReplicaProcess } from './support/replica-process.js';
import { WriteLoad } from './support/write-load.js';
import { eventually } from '../support/eventually.js';

const NS = 'term';

// A replica process gets SIGTERM under write load and with an open watch.
describe('fault: SIGTERM under load shuts down gracefully', { timeout: 120_000 }, () => {
  let database: TestDatabase;
  let replica: ReplicaProcess;

  before(async () => {
    database = await createTestDatabase('sigterm');
    replica = await ReplicaProcess.start({ DATABASE_URL: database.url, PLINTH_SHUTDOWN_DELAY_SECONDS: '1.5', PLINTH_SHUTDOWN_TIMEOUT_SECONDS: '20' });
    const res = await fetch(`${replica.url}/api/v1/namespaces`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ metadata: { name: NS } }) });
    assert.equal(res.status, 201);
  });
  after(async () => {
    await replica?.kill().catch(() => undefined);
    await database?.drop().catch(() => undefined);
  });

  it('fails /readyz first while still serving, completes every request in flight, ends watches cleanly, refuses new requests, exits 0', async () => {
    const list = await fetch(`${replica.url}/api/v1/namespaces/${NS}/configmaps`);
    const from = ((await list.json()) as { metadata: { resourceVersion: string } }).metadata.resourceVersion;
    const watch = await WatchClient.watch(replica.url, `/api/v1/namespaces/${NS}/configmaps?resourceVersion=${from}`);
    const load = new WriteLoad([replica.url], NS, 8, 30_000, true);
    await eventually(() => load.outcomes.filter((o) => o.status === 201).length >= 20, { timeoutMs: 20_000, message: 'writes before the signal' });

    replica.proc.kill('SIGTERM');
    const signalled = Date.now();
    // As a load balancer does: once /readyz fails, send nothing new; what was sent must still be answered.
    await eventually(async () => {
      const res = await fetch(`${replica.url}/readyz?verbose`, { headers: { connection: 'close' } }).catch(() => undefined);
      return res?.status === 503 && /\[-\]shutdown failed: reason withheld/.test(await res.text());
    }, { timeoutMs: 5000, message: '/readyz fails at once' });
    await load.stop();
    const afterSignal = load.outcomes.filter((o) => o.at >= signalled);
    assert.ok(afterSignal.some((o) => o.status === 201), 'requests in flight at the signal were served');
    assert.deepEqual(load.outcomes.filter((o) => o.status !== 201), [], 'no request in flight was refused or reset');

    // Past the delay, a new request is refused: 503 Status while draining, or no listener any more.
    await new Promise((r) => setTimeout(r, 1700));
    const probe = await fetch(`${replica.url}/api/v1/namespaces/${NS}/configmaps`, { headers: { connection: 'close' } }).then(
      async (r) => ({ status: r.status, body: (await r.json()) as { kind?: string } }),
      (e: Error & { cause?: { code?: string } }) => ({ status: 0, code: e.cause?.code }),
    );
    assert.ok((probe.status === 503 && 'body' in probe && probe.body.kind === 'Status') || ('code' in probe && probe.code === 'ECONNREFUSED'), JSON.stringify(probe));

    const code = await replica.exited;
    assert.equal(code, 0, replica.output);
    await watch.ended;
    assert.equal(watch.endedCleanly, true, 'the watch was ended with its final chunk, not reset');

    // Every acknowledged write is stored, and the watch saw a prefix of the committed changes, in order.
    const db = createDatabase({ connectionString: database.url, maxConnections: 1 });
    try {
      const committed = (await new ChangeLogRepository(db).changesAfter(Number(from), 100_000)).filter((c) => c.key.namespace === NS);
      const names = new Set(committed.map((c) => c.key.name));
      for (const o of load.outcomes.filter((x) => x.status === 201)) assert.ok(names.has(o.name), `acknowledged ${o.name} is missing`);
      const seen = watch.events.filter((e) => e.type !== 'BOOKMARK').map((e) => Number(e.object.metadata.resourceVersion));
      assert.deepEqual(seen, committed.map((c) => c.revision).slice(0, seen.length));
    } finally {
      await db.destroy();
    }
  });
});
