import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import type { RunningServer } from '../../apps/api/src/app/server.js';
import { WatchService } from '../../apps/api/src/watch/watch.service.js';
import { eventually } from '../support/eventually.js';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { WatchClient } from '../watch/support/watch-client.js';
import { RevisionLedger, startReplica, startWriters } from './support/ha-load.js';
import { SentinelCluster, sentinelInstalled } from './support/redis-sentinel-cluster.js';

const NS = 'sentinel';
const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';

/**
 * A watcher on one replica that must see every change exactly once, in
 * order: it watches from a revision, re-watches from the last one it saw
 * when the stream ends, and counts a 410 (which would hide a missed event
 * behind a relist) as a failure.
 */
class StrictWatcher {
  readonly added: { name: string; rv: number }[] = [];
  readonly problems: string[] = [];
  private stopped = false;
  private current: WatchClient | undefined;
  private readonly done: Promise<void>;

  constructor(
    private readonly base: string,
    private rv: number,
  ) {
    this.done = this.run();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.current?.close();
    await this.done;
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      let w: WatchClient;
      try {
        w = await WatchClient.watch(this.base, `/api/v1/namespaces/${NS}/configmaps?resourceVersion=${this.rv}&allowWatchBookmarks=true`);
      } catch {
        await new Promise((s) => setTimeout(s, 200));
        continue;
      }
      this.current = w;
      if (w.status !== 200) {
        this.problems.push(`watch from ${this.rv} answered ${w.status}`);
        w.close();
        await new Promise((s) => setTimeout(s, 200));
        continue;
      }
      while (!this.stopped) {
        let e;
        try {
          e = await w.next(500);
        } catch {
          if (w.isEnded) break;
          continue;
        }
        if (e.type === 'ERROR') {
          this.problems.push(`watch from ${this.rv} ended with ${JSON.stringify(e.object)}`);
          break;
        }
        const rv = Number(e.object.metadata.resourceVersion);
        if (e.type !== 'BOOKMARK') {
          if (rv <= this.rv) this.problems.push(`${e.type} ${e.object.metadata.name} at ${rv} after ${this.rv}: out of order or repeated`);
          if (e.type === 'ADDED') this.added.push({ name: e.object.metadata.name, rv });
          else this.problems.push(`unexpected ${e.type} ${e.object.metadata.name}`);
        }
        this.rv = Math.max(this.rv, rv);
      }
      w.close();
    }
  }
}

/** A CRD served in v1 and v2 (no conversion webhook: the apiVersion rewrite), stored in v1. */
function widgetCrd(): Record<string, unknown> {
  const schema = { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } } };
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'widgets.ha.example.com' },
    spec: {
      group: 'ha.example.com',
      scope: 'Namespaced',
      names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
      versions: [
        { name: 'v1', served: true, storage: true, schema },
        { name: 'v2', served: true, storage: false, schema },
      ],
    },
  };
}

describe('high availability: Redis with three Sentinels, master SIGKILLed under writers and watchers on two replicas', { skip: sentinelInstalled() ? false : 'needs the Debian package redis-server', timeout: 120_000 }, () => {
  let redis: SentinelCluster | undefined;
  let db: TestDatabase | undefined;
  const replicas: RunningServer[] = [];

  before(async () => {
    redis = await SentinelCluster.start();
    db = await createTestDatabase('redis-sentinel');
    for (let i = 0; i < 2; i++) replicas.push(await startReplica(db.url, redis.url));
    await request(replicas[0].url).post('/api/v1/namespaces').send({ metadata: { name: NS } }).expect(201);
  });
  after(async () => {
    for (const r of replicas) await r.stop().catch(() => undefined);
    await redis?.stop();
    await db?.drop().catch(() => undefined);
  });

  it('watchers see every acknowledged write exactly once and in order, writes go on, the fan-out and BullMQ jobs follow the new master', async () => {
    const r = redis!;
    const pipelines = replicas.map((s) => s.app.get(WatchService).pipeline);
    const from = Number((await request(replicas[0].url).get(`/api/v1/namespaces/${NS}/configmaps`).expect(200)).body.metadata.resourceVersion);
    const watchers = replicas.flatMap((s) => [new StrictWatcher(s.url, from), new StrictWatcher(s.url, from)]);
    const ledger = new RevisionLedger();
    const writers = startWriters(replicas, NS, 3, ledger);
    await eventually(() => writers.stats.acked.size > 60, { timeoutMs: 20_000, message: 'writes acknowledged before the fault' });

    // The replica stops taking the master's stream for a while (SIGSTOP) and the master dies (SIGKILL): the
    // promoted replica lacks the last entries the relay published and the watchers may have read.
    const master = await r.masterPort();
    assert.equal(master, r.dataPorts[0]);
    const replica = r.dataPorts[1];
    await r.signal(replica, 'SIGSTOP');
    const beforeGap = writers.stats.acked.size;
    await eventually(() => writers.stats.acked.size > beforeGap + 30, { timeoutMs: 10_000, message: 'writes acknowledged while the replica is stopped' });
    await r.signal(master, 'SIGKILL');
    const killedAt = Date.now();
    await r.signal(replica, 'SIGCONT');
    await eventually(async () => (await r.masterPort()) === replica, { timeoutMs: 30_000, intervalMs: 250, message: 'the Sentinels promote the replica' });
    const promotedAt = Date.now();
    await eventually(() => writers.stats.ackTimes.filter((t) => t > promotedAt).length > 30, { timeoutMs: 20_000, message: 'writes acknowledged after the failover' });

    // The fan-out is back on Redis (the new master) on both replicas: not degraded, and changes arrive through the stream.
    const streamedAt = pipelines.map((p) => p.counters.streamed);
    await eventually(() => pipelines.every((p, i) => p.degradations().length === 0 && p.counters.streamed > streamedAt[i] + 10) || (console.log(`# ${Date.now() - killedAt} ms: ${JSON.stringify(pipelines.map((p, i) => [p.degradations(), p.counters.streamed - streamedAt[i], p.isRelay]))}`), false), {
      timeoutMs: 20_000,
      intervalMs: 1000,
      message: 'both replicas streaming from the new master',
    });
    const streamingAt = Date.now();

    // A BullMQ-driven feature after the failover: a CRD storage version switch is migrated by a job.
    const api = request(replicas[1].url);
    const crd = widgetCrd();
    const created = await api.post(CRDS).send(crd);
    assert.equal(created.status, 201, created.text);
    await eventually(async () => ((await api.get(CRDS + '/widgets.ha.example.com')).body.status?.conditions ?? []).some((c: { type: string; status: string }) => c.type === 'Established' && c.status === 'True'), { message: 'the CRD established' });
    for (let i = 0; i < 5; i++) await api.post(`/apis/ha.example.com/v1/namespaces/${NS}/widgets`).send({ apiVersion: 'ha.example.com/v1', kind: 'Widget', metadata: { name: `w${i}` }, spec: { i } }).expect(201);
    const cur = (await api.get(`${CRDS}/widgets.ha.example.com`).expect(200)).body;
    cur.spec.versions[0].storage = false;
    cur.spec.versions[1].storage = true;
    await api.put(`${CRDS}/widgets.ha.example.com`).send(cur).expect(200);
    await eventually(async () => {
      const got = (await api.get(`${CRDS}/widgets.ha.example.com`).expect(200)).body;
      return JSON.stringify(got.status?.storedVersions) === '["v2"]';
    }, { timeoutMs: 20_000, intervalMs: 250, message: 'the storage version migration job ran (storedVersions ["v2"])' });

    await writers.stop();
    const acked = [...writers.stats.acked].sort((a, b) => a[1] - b[1]);
    await eventually(() => watchers.every((w) => acked.every(([name]) => w.added.some((a) => a.name === name))), { timeoutMs: 20_000, intervalMs: 200, message: 'every watcher caught up' });
    for (const w of watchers) await w.stop();

    for (const [i, w] of watchers.entries()) {
      assert.deepEqual(w.problems, [], `watcher ${i}: no 410, no repeat, nothing out of order`);
      assert.deepEqual(w.added.map((a) => a.rv), [...w.added.map((a) => a.rv)].sort((a, b) => a - b), `watcher ${i}: in revision order`);
      const seen = new Map(w.added.map((a) => [a.name, a.rv]));
      assert.equal(seen.size, w.added.length, `watcher ${i}: each object once`);
      const missing = acked.filter(([name, rv]) => seen.get(name) !== rv);
      assert.deepEqual(missing, [], `watcher ${i}: every acknowledged write seen`);
    }
    assert.deepEqual(ledger.reused, [], 'no resourceVersion handed out twice');
    assert.deepEqual(writers.stats.problems, [], 'no 500, no 503 without Retry-After, no hang');
    console.log(`# redis sentinel: ${acked.length} acknowledged, first ack ${Math.min(...writers.stats.ackTimes.filter((t) => t > killedAt)) - killedAt} ms after the SIGKILL, promoted after ${promotedAt - killedAt} ms, both replicas streaming again within ${streamingAt - killedAt} ms, changes read from PostgreSQL to fill the fan-out ${JSON.stringify(pipelines.map((p) => p.counters.backfilled))}, statuses ${JSON.stringify(Object.fromEntries(writers.stats.statuses))}`);
  });
});
