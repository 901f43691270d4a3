import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import type { RunningServer } from '../../apps/api/src/app/server.js';
import { TestCluster, TestRedis } from './support/cluster.js';
import { WatchClient } from './support/watch-client.js';
import { ChangeLogRepository } from '@plinth/storage';
import { WatchService } from '../../apps/api/src/watch/watch.service.js';
import { eventually } from '../support/eventually.js';

const revisionsOf = (events: { object: { metadata: { resourceVersion: string } } }[]) => events.map((e) => Number(e.object.metadata.resourceVersion));
const sharedRedis = () => {
  const url = process.env.PLINTH_TEST_REDIS_URL;
  assert.ok(url, 'PLINTH_TEST_REDIS_URL is not set: run with test/run-tests.mjs (redis-server must be installed)');
  return url;
};

async function upsert(base: string, ns: string, name: string, data: Record<string, string> = {}): Promise<number> {
  const api = request(base);
  for (let attempt = 0; ; attempt++) {
    let res = await api.put(`/api/v1/namespaces/${ns}/configmaps/${name}`).send({ metadata: { name }, data });
    if (res.status === 404) res = await api.post(`/api/v1/namespaces/${ns}/configmaps`).send({ metadata: { name }, data });
    if (res.status < 300) return Number(res.body.metadata.resourceVersion);
    assert.ok(attempt < 5, `write failed: ${res.status} ${res.text}`);
  }
}

async function logRevisions(r: RunningServer, after: number, ns: string): Promise<number[]> {
  return (await r.app.get(ChangeLogRepository).changesAfter(after, 100_000)).filter((c) => c.key.namespace === ns).map((c) => c.revision);
}

async function listRevision(base: string, ns: string): Promise<number> {
  return Number((await request(base).get(`/api/v1/namespaces/${ns}/configmaps`).expect(200)).body.metadata.resourceVersion);
}

describe('watch: cluster mode (two replicas, Redis fan-out)', { timeout: 120_000 }, () => {
  let c: TestCluster;
  const open: WatchClient[] = [];
  const watch = async (base: string, path: string) => {
    const w = await WatchClient.watch(base, path);
    open.push(w);
    assert.equal(w.status, 200);
    return w;
  };

  before(async () => {
    c = await TestCluster.start('watch_cluster', 2, sharedRedis(), { PLINTH_WATCH_POLL_INTERVAL_MS: '5000', PLINTH_COMPACTION_INTERVAL_SECONDS: '1' });
    for (const ns of ['fan', 'fail']) await request(c.replicas[0].url).post('/api/v1/namespaces').send({ metadata: { name: ns } }).expect(201);
  });
  after(async () => {
    for (const w of open) w.close();
    await c.close();
  });

  it('elects exactly one relay, and runs compaction as a BullMQ job', async () => {
    await eventually(() => c.replicas.filter((r) => r.app.get(WatchService).pipeline.isRelay).length === 1, { message: 'one relay' });
    await eventually(() => c.replicas.some((r) => r.app.get(WatchService).pipeline.compaction.stats.lastRunAt !== undefined), { timeoutMs: 15_000, message: 'a compaction run' });
    for (const r of c.replicas) await eventually(async () => (await request(r.url).get('/readyz')).status === 200, { timeoutMs: 5000, message: 'ready' });
  });

  it('delivers changes made on either replica to watchers on both, once each, in revision order', async () => {
    const [a, b] = c.replicas;
    const from = await listRevision(b.url, 'fan');
    const wa = await watch(a.url, `/api/v1/namespaces/fan/configmaps?resourceVersion=${from}`);
    const wb = await watch(b.url, `/api/v1/namespaces/fan/configmaps?resourceVersion=${from}`);
    await Promise.all([
      (async () => {
        for (let i = 0; i < 40; i++) await upsert(a.url, 'fan', `a-${i % 7}`, { i: String(i) });
      })(),
      (async () => {
        for (let i = 0; i < 40; i++) await upsert(b.url, 'fan', `b-${i % 7}`, { i: String(i) });
      })(),
    ]);
    const want = await logRevisions(a, from, 'fan');
    assert.equal(want.length, 80);
    assert.deepEqual(revisionsOf(await wa.take(80, 10_000)), want);
    assert.deepEqual(revisionsOf(await wb.take(80, 10_000)), want);
    assert.deepEqual(await wb.drainFor(300), []);
    // The changes came through the Redis stream (the fallback poll is 5 s here).
    for (const r of [a, b]) assert.ok(r.app.get(WatchService).pipeline.counters.streamed >= 80, `streamed ${r.app.get(WatchService).pipeline.counters.streamed}`);
  });

  it('fails the relay over when the relay replica stops mid-stream; no watcher misses or repeats a change', async () => {
    const relay = c.relay()!;
    const other = c.replicas.find((r) => r !== relay)!;
    const from = await listRevision(other.url, 'fail');
    const onOther = await watch(other.url, `/api/v1/namespaces/fail/configmaps?resourceVersion=${from}`);
    const onRelay = await watch(relay.url, `/api/v1/namespaces/fail/configmaps?resourceVersion=${from}`);
    let stopped = false;
    const writer = (async () => {
      for (let i = 0; i < 120; i++) {
        await upsert(other.url, 'fail', `f-${i % 9}`, { i: String(i) });
        if (i === 40) {
          stopped = true;
          await c.stopReplica(relay);
        }
        await new Promise((r) => setTimeout(r, 5));
      }
    })();
    await eventually(() => stopped, { timeoutMs: 20_000, message: 'the relay stopped' });
    assert.ok(await onRelay.waitEnd(5000), 'watches on the stopped replica end cleanly');
    const before = onRelay.events.slice();
    const last = before.length ? Number(before[before.length - 1].object.metadata.resourceVersion) : from;
    const resumed = await watch(other.url, `/api/v1/namespaces/fail/configmaps?resourceVersion=${last}`);
    await eventually(() => other.app.get(WatchService).pipeline.isRelay, { timeoutMs: 5000, message: 'the other replica takes over as relay' });
    await writer;
    const want = await logRevisions(other, from, 'fail');
    assert.equal(want.length, 120);
    assert.deepEqual(revisionsOf(await onOther.take(120, 15_000)), want);
    const wantAfter = want.filter((r) => r > last);
    assert.deepEqual(revisionsOf(before).concat(revisionsOf(await resumed.take(wantAfter.length, 15_000))), want);
    await c.add();
    await eventually(() => c.replicas.filter((r) => r.app.get(WatchService).pipeline.isRelay).length === 1, { message: 'still exactly one relay' });
  });
});

describe('watch: cluster mode survives a Redis restart', { timeout: 120_000 }, () => {
  let redis: TestRedis;
  let c: TestCluster;
  const open: WatchClient[] = [];

  before(async () => {
    redis = await TestRedis.start();
    c = await TestCluster.start('watch_redis', 2, redis.url, { PLINTH_WATCH_POLL_INTERVAL_MS: '200' });
    await request(c.replicas[0].url).post('/api/v1/namespaces').send({ metadata: { name: 'rr' } }).expect(201);
  });
  after(async () => {
    for (const w of open) w.close();
    try {
      await redis.restart().catch(() => undefined);
      await c?.close();
    } finally {
      await redis.kill();
    }
  });

  it('keeps every watcher exact through the outage, stays ready while reporting the degradation in /readyz?verbose and a metric, and recovers by itself', async () => {
    const [a, b] = c.replicas;
    await eventually(() => c.relay() !== undefined, { message: 'a relay' });
    const from = await listRevision(b.url, 'rr');
    const w = await WatchClient.watch(b.url, `/api/v1/namespaces/rr/configmaps?resourceVersion=${from}`);
    open.push(w);
    for (let i = 0; i < 10; i++) await upsert(a.url, 'rr', `x-${i}`);
    await w.take(10, 5000);

    await redis.kill();
    // The PostgreSQL fallback keeps watches exact: both replicas stay ready, and say they are degraded.
    for (const r of [a, b]) {
      await eventually(async () => {
        const res = await request(r.url).get('/readyz?verbose');
        assert.equal(res.status, 200, res.text);
        return /\[\+\]watch-fanout ok \(degraded: Redis is unreachable/.test(res.text);
      }, { message: 'readyz?verbose reports the degradation' });
      assert.match((await request(r.url).get('/metrics')).text, /^plinth_watch_fanout_degraded 1$/m);
    }
    for (let i = 0; i < 10; i++) await upsert(a.url, 'rr', `y-${i}`);
    await w.take(10, 8000);
    for (const r of [a, b]) assert.equal((await request(r.url).get('/readyz')).status, 200);

    await redis.restart();
    for (const r of [a, b]) {
      await eventually(async () => {
        const res = await request(r.url).get('/readyz?verbose');
        return res.status === 200 && /^\[\+\]watch-fanout ok$/m.test(res.text);
      }, { timeoutMs: 15_000, message: 'the degradation clears' });
    }
    for (let i = 0; i < 10; i++) await upsert(b.url, 'rr', `z-${i}`);
    await w.take(10, 8000);
    const want = await logRevisions(a, from, 'rr');
    assert.deepEqual(revisionsOf(w.events), want);
    assert.deepEqual(await w.drainFor(300), []);
  });
});
