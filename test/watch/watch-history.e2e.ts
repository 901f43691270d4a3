import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import request from 'supertest';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { WatchClient } from './support/watch-client.js';
import { ChangeLogRepository } from '@plinth/storage';
import { WatchService } from '../../apps/api/src/watch/watch.service.js';
import { eventually } from '../support/eventually.js';

const revisionsOf = (events: { object: { metadata: { resourceVersion: string } } }[]) => events.map((e) => Number(e.object.metadata.resourceVersion));

// A small watch cache window (100 changes) so resumes fall outside it.
describe('watch: resuming from history, expiry and compaction', { timeout: 120_000 }, () => {
  let s: TestServer;
  let api: ReturnType<typeof request>;
  const open: WatchClient[] = [];
  const watch = async (path: string) => {
    const w = await WatchClient.watch(s.url, path);
    open.push(w);
    assert.equal(w.status, 200);
    return w;
  };
  const logRevisions = async (after: number, ns: string) =>
    (await s.app.get(ChangeLogRepository).changesAfter(after, 100_000)).filter((c) => c.key.namespace === ns).map((c) => c.revision);
  const upsert = async (ns: string, name: string, data: Record<string, string> = {}) => {
    const res = await api.put(`/api/v1/namespaces/${ns}/configmaps/${name}`).send({ metadata: { name }, data });
    if (res.status !== 404) return res;
    return api.post(`/api/v1/namespaces/${ns}/configmaps`).send({ metadata: { name }, data });
  };
  const churn = async (ns: string, n: number, prefix = 'c') => {
    const rvs: number[] = [];
    for (let i = 0; i < n; i++) {
      const name = `${prefix}-${i % 20}`;
      const res = await upsert(ns, name, { i: String(i) });
      assert.ok(res.status === 200 || res.status === 201, `write ${i}: ${res.status} ${res.text}`);
      rvs.push(Number(res.body.metadata.resourceVersion));
    }
    return rvs;
  };

  before(async () => {
    s = await startTestServer('watch_hist', { PLINTH_WATCH_CACHE_SIZE: '100', PLINTH_WATCH_POLL_INTERVAL_MS: '200' });
    api = request(s.url);
    for (const ns of ['h1', 'h2', 'h3', 'h4']) await api.post('/api/v1/namespaces').send({ metadata: { name: ns } }).expect(201);
  });
  after(async () => {
    for (const w of open) w.close();
    await s.close();
  });

  it('serves a watch from before the cache window from the change log, then joins the live stream without gap or repeat', async () => {
    const rvs = await churn('h1', 250);
    assert.ok(s.app.get(WatchService).pipeline.cache.oldestResumable > rvs[20], 'the start is outside the window');
    const from = rvs[20];
    const w = await watch(`/api/v1/namespaces/h1/configmaps?resourceVersion=${from}`);
    // Writes keep coming while the watch catches up.
    const more = churn('h1', 60, 'live');
    await more;
    const want = await logRevisions(from, 'h1');
    const got = revisionsOf(await w.take(want.length, 15_000));
    assert.deepEqual(got, want);
    assert.deepEqual(await w.drainFor(300), []);
    const last = await churn('h1', 3, 'after');
    assert.deepEqual(revisionsOf(await w.take(3)), last);
  });

  it('answers a watch from compacted history with 200, one ERROR 410 Expired event, then closes', async () => {
    const rvs = await churn('h2', 130);
    const deleted = await s.app.get(WatchService).pipeline.compaction.runOnce(new Date(Date.now() + 48 * 3600_000));
    assert.ok(deleted > 0);
    const compacted = await s.app.get(ChangeLogRepository).compactedRevision();
    assert.equal(s.app.get(WatchService).pipeline.compaction.stats.compactedRevision, compacted);
    assert.equal(s.app.get(WatchService).pipeline.compaction.stats.lagSeconds, 0);
    const w = await watch(`/api/v1/namespaces/h2/configmaps?resourceVersion=${rvs[0]}`);
    const e = await w.next();
    assert.deepEqual(e, {
      type: 'ERROR',
      object: {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: `too old resource version: ${rvs[0]} (${compacted})`,
        reason: 'Expired',
        code: 410,
      },
    });
    assert.ok(await w.waitEnd(3000), 'the stream closes after the ERROR');
    // Inside the cache window the same history is still served.
    const recent = rvs[rvs.length - 10];
    const w2 = await watch(`/api/v1/namespaces/h2/configmaps?resourceVersion=${recent}`);
    assert.deepEqual(revisionsOf(await w2.take(9)), rvs.slice(-9));
    // A list at a compacted revision is 410 too.
    const list = await api.get(`/api/v1/namespaces/h2/configmaps?resourceVersion=${rvs[0]}&resourceVersionMatch=Exact`).expect(410);
    assert.equal(list.body.reason, 'Expired');
  });

  it('keeps delivering when the LISTEN connection is killed (PostgreSQL restart) and readyz recovers', async () => {
    const w = await watch(`/api/v1/namespaces/h3/configmaps?resourceVersion=${(await api.get('/api/v1/namespaces/h3/configmaps')).body.metadata.resourceVersion}`);
    const admin = new pg.Client({ connectionString: s.database.url });
    await admin.connect();
    try {
      await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()');
    } finally {
      await admin.end();
    }
    const written: number[] = [];
    for (let i = 0; i < 5; i++) {
      for (let attempt = 0; ; attempt++) {
        const res = await upsert('h3', `r-${i}`);
        if (res.status < 300) {
          written.push(Number(res.body.metadata.resourceVersion));
          break;
        }
        assert.ok(attempt < 5, `write kept failing: ${res.status} ${res.text}`);
      }
    }
    assert.deepEqual(revisionsOf(await w.take(5, 8000)), written);
    await eventually(async () => {
      const r = await api.get('/readyz');
      assert.equal(r.status, 200, `readyz still failing: ${r.text}`);
    }, { timeoutMs: 8000, intervalMs: 200 });
  });

  it('serves many concurrent resumes from different points, each exactly the log after its start', async () => {
    const rvs = await churn('h4', 200);
    const starts = [rvs[0], rvs[50], rvs[120], rvs[180], rvs[199]];
    const watchers = await Promise.all(starts.map((rv) => watch(`/api/v1/namespaces/h4/configmaps?resourceVersion=${rv}`)));
    const tail = await churn('h4', 40, 'tail');
    await Promise.all(
      watchers.map(async (w, i) => {
        const want = await logRevisions(starts[i], 'h4');
        assert.equal(want[want.length - 1], tail[tail.length - 1]);
        assert.deepEqual(revisionsOf(await w.take(want.length, 15_000)), want, `watch from ${starts[i]}`);
      }),
    );
  });
});
