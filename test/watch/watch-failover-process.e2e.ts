import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import { ChangeLogRepository, createDatabase } from '@plinth/storage';
import { useCredentialsOf } from '../support/credentials.js';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { freePort } from './support/cluster.js';
import { WatchClient } from './support/watch-client.js';
import { eventually } from '../support/eventually.js';

interface Replica {
  url: string;
  proc: ChildProcess;
}

async function spawnReplica(database: TestDatabase, redisUrl: string, dataDir: string): Promise<Replica> {
  const port = await freePort();
  const proc = spawn(process.execPath, [path.resolve('dist/apps/api/src/main.js')], {
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATABASE_URL: database.url,
      REDIS_URL: redisUrl,
      PLINTH_DATA_DIR: dataDir,
      PLINTH_DB_POOL_SIZE: '5',
      PLINTH_WATCH_POLL_INTERVAL_MS: '300',
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const reap = () => proc.kill('SIGKILL');
  process.once('exit', reap);
  proc.once('exit', () => process.removeListener('exit', reap));
  const url = `https://127.0.0.1:${port}`;
  await eventually(async () => (await request(url).get('/readyz').catch(() => ({ status: 0 }))).status === 200, { timeoutMs: 30_000, message: `replica on ${port} ready` });
  return { url, proc };
}

async function isRelay(r: Replica): Promise<boolean> {
  const m = await request(r.url).get('/metrics');
  return /^plinth_watch_relay_leader 1$/m.test(m.text);
}

// Two real server processes; the relay process is SIGKILLed mid-stream (no clean shutdown, no lock release).
describe('watch: relay failover when the relay process is killed', { timeout: 120_000 }, () => {
  let database: TestDatabase;
  let dataDir: string;
  const replicas: Replica[] = [];
  const open: WatchClient[] = [];

  before(async () => {
    const redisUrl = process.env.PLINTH_TEST_REDIS_URL;
    assert.ok(redisUrl, 'PLINTH_TEST_REDIS_URL is not set');
    database = await createTestDatabase('watch_kill');
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'plinth-kill-'));
    // Created before the replicas start, so both use it and the test's clients present its administrator certificate.
    await useCredentialsOf(dataDir);
    replicas.push(await spawnReplica(database, redisUrl, dataDir));
    replicas.push(await spawnReplica(database, redisUrl, dataDir));
    await request(replicas[0].url).post('/api/v1/namespaces').send({ metadata: { name: 'k' } }).expect(201);
  });
  after(async () => {
    for (const w of open) w.close();
    for (const r of replicas) if (r.proc.exitCode === null) r.proc.kill('SIGKILL');
    await database.drop().catch(() => undefined);
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('the other replica takes over, and its watchers miss and repeat nothing', async () => {
    await eventually(async () => (await isRelay(replicas[0])) || (await isRelay(replicas[1])), { message: 'a relay' });
    const relay = (await isRelay(replicas[0])) ? replicas[0] : replicas[1];
    const other = replicas.find((r) => r !== relay)!;
    const api = request(other.url);
    const from = Number((await api.get('/api/v1/namespaces/k/configmaps').expect(200)).body.metadata.resourceVersion);
    const w = await WatchClient.watch(other.url, `/api/v1/namespaces/k/configmaps?resourceVersion=${from}`);
    open.push(w);
    let killedAt = 0;
    for (let i = 0; i < 150; i++) {
      const name = `k-${i % 11}`;
      let res = await api.put(`/api/v1/namespaces/k/configmaps/${name}`).send({ metadata: { name }, data: { i: String(i) } });
      if (res.status === 404) res = await api.post('/api/v1/namespaces/k/configmaps').send({ metadata: { name }, data: { i: String(i) } });
      assert.ok(res.status < 300, `${res.status} ${res.text}`);
      if (i === 50) {
        relay.proc.kill('SIGKILL');
        killedAt = Date.now();
      }
      await new Promise((r) => setTimeout(r, 10));
    }
    await eventually(() => isRelay(other), { timeoutMs: 30_000, message: 'the surviving replica is the relay' });
    const tookMs = Date.now() - killedAt;
    const db = createDatabase({ connectionString: database.url, maxConnections: 1 });
    try {
      const want = (await new ChangeLogRepository(db).changesAfter(from, 10_000)).filter((c) => c.key.namespace === 'k').map((c) => c.revision);
      assert.equal(want.length, 150);
      const got = (await w.take(150, 15_000)).map((e) => Number(e.object.metadata.resourceVersion));
      assert.deepEqual(got, want);
      assert.deepEqual(await w.drainFor(300), []);
    } finally {
      await db.destroy();
    }
  });
});
