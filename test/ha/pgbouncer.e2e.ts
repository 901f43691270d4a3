import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { chmodSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import { checkSessionPooling, SessionPoolingError } from '@plinth/storage';
import { eventually } from '../support/eventually.js';
import { kubectl, writeTestKubeconfig } from '../support/kubectl.js';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { startTestServerOn, type TestServer } from '../support/test-server.js';
import { WatchClient } from '../watch/support/watch-client.js';
import { conditionOf, registerShard, SHARDS } from '../shards/support/shards.js';
import { PgBouncer, pgbouncerInstalled } from './support/pgbouncer.js';

const skip = pgbouncerInstalled() ? false : 'needs the Debian package pgbouncer (.ci/run installs it)';
const MAIN = path.join(process.cwd(), 'dist/apps/api/src/main.js');

/** Runs `npm start`'s entry point with `env` until it exits: its exit code and the `plinth: ` line it printed. */
function startProcess(env: Record<string, string>): Promise<{ code: number | null; line: string; stderr: string }> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'plinth-pgbouncer-'));
  chmodSync(dataDir, 0o755);
  const base = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'fatal', PLINTH_DATA_DIR: dataDir };
  return new Promise((resolve) => {
    // A server that starts (no check) runs until the timeout, and exits 0 on its SIGTERM.
    execFile(process.execPath, [MAIN], { env: { ...base, ...env }, timeout: 90_000 }, (err, _stdout, stderr) => {
      const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : null) : 0;
      const text = String(stderr);
      resolve({ code, line: text.split('\n').find((l) => l.startsWith('plinth: ')) ?? '', stderr: text });
    });
  });
}

// Issue 41 item 6: PgBouncer in session mode works; in transaction or statement mode Plinth refuses to start (docs/operations.md).
describe('PgBouncer in front of PostgreSQL', { skip, timeout: 400_000 }, () => {
  const bouncers: PgBouncer[] = [];
  let db: TestDatabase;
  const admin = () => process.env.PLINTH_TEST_PG_ADMIN_URL!;

  before(async () => {
    db = await createTestDatabase('pgbouncer');
  });
  after(async () => {
    for (const b of bouncers) await b.stop().catch(() => undefined);
    await db?.drop();
  });

  async function bouncer(mode: 'session' | 'transaction' | 'statement'): Promise<PgBouncer> {
    const b = await PgBouncer.start(admin(), mode);
    bouncers.push(b);
    return b;
  }

  it('the client-side check: session mode and PostgreSQL itself pass, transaction and statement mode are caught', async () => {
    await checkSessionPooling(db.url);
    const session = await bouncer('session');
    await checkSessionPooling(session.url(db.name));
    const transaction = await bouncer('transaction');
    await assert.rejects(checkSessionPooling(transaction.url(db.name)), (err: unknown) => {
      assert.ok(err instanceof SessionPoolingError, String(err));
      assert.equal(err.mode, 'transaction');
      assert.match(err.message, /127\.0\.0\.1:\d+\/t_pgbouncer_\w+ is reached through a connection pooler in transaction mode/);
      assert.ok(!err.message.includes('plinth@') && !err.message.includes(':plinth'), 'no credentials');
      return true;
    });
    const statement = await bouncer('statement');
    await assert.rejects(checkSessionPooling(statement.url(db.name)), (err: unknown) => err instanceof SessionPoolingError && err.mode === 'statement');
  });

  it('transaction and statement mode: start-up fails with one plinth: line saying why (exit 2), for DATABASE_URL and for a shard of PLINTH_SHARDS', async () => {
    const transaction = await bouncer('transaction');
    const o = await startProcess({ DATABASE_URL: transaction.url(db.name) });
    assert.equal(o.code, 2, o.stderr);
    assert.match(o.line, /^plinth: DATABASE_URL reaches PostgreSQL at 127\.0\.0\.1:\d+\/t_pgbouncer_\w+ is reached through a connection pooler in transaction mode \(.+\), e\.g\. PgBouncer with pool_mode = transaction: Plinth relies on session state \(LISTEN .*advisory locks.*plinth\.tenant.*named prepared statements.*synchronous_commit.*\); set pool_mode = session/);
    assert.ok(!o.stderr.includes(':plinth@'), 'no password printed');

    const statement = await bouncer('statement');
    const s = await startProcess({ DATABASE_URL: statement.url(db.name), PLINTH_WORKERS: '1' });
    assert.equal(s.code, 2, s.stderr);
    assert.match(s.line, /^plinth: DATABASE_URL reaches .* in statement mode .*set pool_mode = session/);

    const shard = await startProcess({ DATABASE_URL: db.url, PLINTH_SHARDS: `east=${transaction.url(db.name)}`, PLINTH_WORKERS: '1' });
    assert.equal(shard.code, 2, shard.stderr);
    assert.match(shard.line, /^plinth: PLINTH_SHARDS \(shard east\) reaches .* in transaction mode .*point PLINTH_SHARDS \(shard east\) at PostgreSQL itself/);
  });

  describe('session mode', () => {
    let server: TestServer | undefined;
    let pgb: PgBouncer;
    let kubeconfig: string;
    before(async () => {
      pgb = await bouncer('session');
      server = await startTestServerOn({ ...db, url: pgb.url(db.name) }, { PLINTH_WATCH_POLL_INTERVAL_MS: '500' });
      kubeconfig = writeTestKubeconfig(server.url);
    });
    after(async () => server?.close());

    it('serves kubectl CRUD and a watch, and survives PgBouncer restarting: quick 503s with Retry-After, then recovery', async () => {
      const base = server!.url;
      const ok = (r: { code: number; stderr: string }) => assert.equal(r.code, 0, r.stderr);
      ok(await kubectl(kubeconfig, ['create', 'namespace', 'pgb']));
      const watch = await WatchClient.watch(base, '/api/v1/namespaces/pgb/configmaps');
      ok(await kubectl(kubeconfig, ['-n', 'pgb', 'create', 'configmap', 'one', '--from-literal=a=1']));
      ok(await kubectl(kubeconfig, ['-n', 'pgb', 'patch', 'configmap', 'one', '-p', '{"data":{"a":"2"}}']));
      const got = await kubectl(kubeconfig, ['-n', 'pgb', 'get', 'configmap', 'one', '-o', 'jsonpath={.data.a}']);
      ok(got);
      assert.equal(got.stdout, '2');
      ok(await kubectl(kubeconfig, ['-n', 'pgb', 'delete', 'configmap', 'one']));
      // The namespace's kube-root-ca.crt comes and goes on its own; the watch must show the three changes of `one`.
      await eventually(() => watch.events.filter((e) => e.object.metadata?.name === 'one').length >= 3, { timeoutMs: 10_000, message: 'three watch events of configmap one' });
      assert.deepEqual(
        watch.events.filter((e) => e.object.metadata?.name === 'one').map((e) => `${e.type} ${e.object.metadata.name} ${e.object.data?.a}`),
        ['ADDED one 1', 'MODIFIED one 2', 'DELETED one 2'],
      );
      watch.close();

      // PgBouncer killed: every connection of the server drops, and new ones are refused.
      await pgb.kill();
      const statuses: string[] = [];
      for (let i = 0; i < 5; i++) {
        const started = Date.now();
        const res = await request(base).post('/api/v1/namespaces/pgb/configmaps').send({ metadata: { name: `down-${i}` } });
        const took = Date.now() - started;
        statuses.push(`${res.status} in ${took} ms`);
        assert.equal(res.status, 503, `while PgBouncer is down: ${res.status} ${JSON.stringify(res.body)}`);
        assert.ok(res.headers['retry-after'], 'a 503 says when to retry');
        assert.equal(res.body.kind, 'Status');
        assert.ok(took < 6000, `a quick 503 (${took} ms)`);
      }

      await pgb.resume();
      const resumedAt = Date.now();
      await eventually(async () => (await request(base).post('/api/v1/namespaces/pgb/configmaps').send({ metadata: { name: 'back' }, data: { a: '3' } })).status === 201, {
        timeoutMs: 30_000,
        message: 'writes again once PgBouncer is back',
      });
      const recoveredMs = Date.now() - resumedAt;
      // A client re-watching after recovery sees new writes (the LISTEN session came back through PgBouncer).
      const again = await WatchClient.watch(base, '/api/v1/namespaces/pgb/configmaps?resourceVersion=0');
      assert.equal(again.status, 200);
      ok(await kubectl(kubeconfig, ['-n', 'pgb', 'create', 'configmap', 'later', '--from-literal=a=4']));
      await eventually(() => again.events.some((e) => e.type === 'ADDED' && e.object.metadata.name === 'later'), { timeoutMs: 15_000, message: 'the watch sees a write after recovery' });
      assert.ok(again.events.some((e) => e.type === 'ADDED' && e.object.metadata.name === 'back'), 'the initial events list the write made on recovery');
      again.close();
      const list = await kubectl(kubeconfig, ['-n', 'pgb', 'get', 'configmaps', '-o', 'name']);
      ok(list);
      assert.match(list.stdout, /configmap\/back/);
      assert.doesNotMatch(list.stdout, /down-/, 'no write answered 503 was stored');
      console.log(`# while PgBouncer was down: ${statuses.join(', ')}; first write acknowledged ${recoveredMs} ms after it was back`);
    });

    it('a Shard added behind a pooler in transaction mode stays not ready, saying why', async () => {
      const base = server!.url;
      const transaction = await bouncer('transaction');
      const shardDb = await createTestDatabase('pgb_shard');
      try {
        await registerShard(base, 'pooled', transaction.url(shardDb.name));
        const shard = await eventually(
          async () => {
            const res = await request(base).get(`${SHARDS}/pooled`);
            const ready = conditionOf(res.body, 'Ready');
            return ready?.status === 'False' && /transaction mode/.test(ready.message ?? '') ? ready : false;
          },
          { timeoutMs: 30_000, message: 'shard pooled Ready=False naming transaction mode' },
        );
        assert.match(shard.message!, /connection pooler in transaction mode .*Plinth relies on session state/);
      } finally {
        await request(base).delete(`${SHARDS}/pooled`);
        await shardDb.drop();
      }
    });
  });
});
