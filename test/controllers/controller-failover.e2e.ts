import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DEFAULT_ELECTION_TIMING } from '@plinth/storage';
import { ReplicaProcess } from '../fault/support/replica-process.js';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { eventually } from '../watch/support/cluster.js';
import { WatchClient } from '../watch/support/watch-client.js';

const NS = 'gc';
const CONTROLLERS = ['garbage-collector', 'namespace-controller', 'crd-controller', 'resourcequota-controller', 'tenant-controller'];
/** Dependents of the owner whose cascade the leader is killed in. */
const DEPENDENTS = 1000;
/** What leader election promises: a dead leader is replaced within the lease duration and a retry period. */
const HANDOVER_BOUND_MS = DEFAULT_ELECTION_TIMING.leaseDurationMs + DEFAULT_ELECTION_TIMING.retryPeriodMs;

async function call(base: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(`${base}${path}`, { method, headers: body ? { 'content-type': 'application/json' } : {}, body: body ? JSON.stringify(body) : undefined });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

/** The value of `name{label="value"}` in /metrics of `r` (undefined when absent or unreachable). */
async function metric(r: ReplicaProcess, name: string, label: string, value: string): Promise<number | undefined> {
  const res = await fetch(`${r.url}/metrics`).catch(() => undefined);
  if (!res || res.status !== 200) return undefined;
  const line = (await res.text()).split('\n').find((l) => l.startsWith(`${name}{`) && l.includes(`${label}="${value}"`));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

const leads = async (r: ReplicaProcess, controller: string) => (await metric(r, 'plinth_leader', 'controller', controller)) === 1;

async function createConfigMap(base: string, name: string, owner?: { name: string; uid: string }): Promise<string> {
  const metadata = { name, ...(owner ? { ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: owner.name, uid: owner.uid }] } : {}) };
  const res = await call(base, 'POST', `/api/v1/namespaces/${NS}/configmaps`, { metadata });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body.metadata.uid;
}

async function configMapNames(base: string, selector = ''): Promise<string[]> {
  const res = await call(base, 'GET', `/api/v1/namespaces/${NS}/configmaps${selector}`);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.items.map((i: { metadata: { name: string } }) => i.metadata.name);
}

/** Runs `fn` over `items`, `width` at a time. */
async function inParallel<T>(items: T[], width: number, fn: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: width }, async () => {
    while (next < items.length) await fn(items[next++]);
  }));
}

// Two real server processes in cluster mode (PostgreSQL + Redis); the leading one is SIGKILLed in the middle of a cascade.
describe('controllers: one leader per controller across two replica processes, and failover mid-cascade', { timeout: 240_000 }, () => {
  let database: TestDatabase;
  const replicas: ReplicaProcess[] = [];
  const watches: WatchClient[] = [];

  before(async () => {
    const redisUrl = process.env.PLINTH_TEST_REDIS_URL;
    assert.ok(redisUrl, 'PLINTH_TEST_REDIS_URL is not set: run with test/run-tests.mjs (redis-server must be installed)');
    database = await createTestDatabase('ctrl_failover');
    const env = { DATABASE_URL: database.url, REDIS_URL: redisUrl, PLINTH_WATCH_POLL_INTERVAL_MS: '300' };
    replicas.push(await ReplicaProcess.start(env), await ReplicaProcess.start(env));
    assert.equal((await call(replicas[0].url, 'POST', '/api/v1/namespaces', { metadata: { name: NS } })).status, 201);
  });
  after(async () => {
    for (const w of watches) w.close();
    for (const r of replicas) await r.kill().catch(() => undefined);
    await database?.drop().catch(() => undefined);
  });

  it('elects exactly one replica per controller, which reports its work queue', async () => {
    for (const c of CONTROLLERS) {
      await eventually(`a leader of ${c}`, async () => (await leads(replicas[0], c)) || (await leads(replicas[1], c)), HANDOVER_BOUND_MS);
      const gauges = await Promise.all(replicas.map((r) => metric(r, 'plinth_leader', 'controller', c)));
      assert.deepEqual([...gauges].sort(), [0, 1], `${c}: ${JSON.stringify(gauges)}`);
    }
    const gcLeader = (await leads(replicas[0], 'garbage-collector')) ? replicas[0] : replicas[1];
    assert.notEqual(await metric(gcLeader, 'plinth_workqueue_adds_total', 'name', 'garbage-collector'), undefined);
    assert.notEqual(await metric(gcLeader, 'plinth_workqueue_depth', 'name', 'garbage-collector'), undefined);
  });

  it('collects the dependents of owners deleted through either replica', async () => {
    for (const [i, r] of replicas.entries()) {
      const other = replicas[1 - i];
      const uid = await createConfigMap(r.url, `owner-${i}`);
      await createConfigMap(other.url, `dep-${i}-a`, { name: `owner-${i}`, uid });
      await createConfigMap(r.url, `dep-${i}-b`, { name: `owner-${i}`, uid });
      assert.equal((await call(r.url, 'DELETE', `/api/v1/namespaces/${NS}/configmaps/owner-${i}`)).status, 200);
      await eventually(`dependents of owner-${i} collected`, async () => (await configMapNames(other.url)).every((n) => !n.startsWith(`dep-${i}-`)));
    }
  });

  it('a dependent cascade interrupted by killing the leading replica is finished by the other, each dependent deleted exactly once', async () => {
    const leader = (await leads(replicas[0], 'garbage-collector')) ? replicas[0] : replicas[1];
    const survivor = replicas.find((r) => r !== leader)!;
    const ownerUid = await createConfigMap(survivor.url, 'big-owner');
    const names = Array.from({ length: DEPENDENTS }, (_, i) => `member-${String(i).padStart(4, '0')}`);
    await inParallel(names, 16, (n) => createConfigMap(survivor.url, n, { name: 'big-owner', uid: ownerUid }));
    const listed = await call(survivor.url, 'GET', `/api/v1/namespaces/${NS}/configmaps`);
    const watch = await WatchClient.watch(survivor.url, `/api/v1/namespaces/${NS}/configmaps?resourceVersion=${listed.body.metadata.resourceVersion}`);
    watches.push(watch);

    // Deleted through the replica that survives; the leader starts collecting, and is killed once it has collected some dependents.
    assert.equal((await call(survivor.url, 'DELETE', `/api/v1/namespaces/${NS}/configmaps/big-owner`)).status, 200);
    await eventually('the leader collects dependents', () => watch.events.filter((e) => e.type === 'DELETED' && e.object.metadata.name.startsWith('member-')).length >= 50, 30_000);
    leader.proc.kill('SIGKILL');
    await leader.exited;
    const killedAt = Date.now();
    const left = (await configMapNames(survivor.url)).filter((n) => n.startsWith('member-')).length;
    assert.ok(left > 0 && left < DEPENDENTS, `the kill came in the middle of the cascade (${left} of ${DEPENDENTS} dependents left)`);

    await eventually('the surviving replica leads the garbage collector', () => leads(survivor, 'garbage-collector'), HANDOVER_BOUND_MS);
    const handoverMs = Date.now() - killedAt;
    await eventually('every dependent collected', async () => (await configMapNames(survivor.url)).every((n) => !n.startsWith('member-')), 120_000);
    console.log(`[controller-failover] ${left} of ${DEPENDENTS} dependents left at the kill; the survivor led after ${handoverMs} ms`);

    // The watch (on the survivor, across the relay's failover too) saw each dependent deleted exactly once, and nothing else.
    await eventually('every deletion watched', () => watch.events.filter((e) => e.type === 'DELETED').length >= DEPENDENTS + 1, 30_000);
    const deleted = watch.events.filter((e) => e.type === 'DELETED').map((e) => e.object.metadata.name as string);
    assert.deepEqual(deleted.filter((n) => n.startsWith('member-')).sort(), names);
    assert.deepEqual(deleted.filter((n) => !n.startsWith('member-')), ['big-owner']);
    assert.deepEqual(watch.events.filter((e) => e.type !== 'DELETED').map((e) => `${e.type} ${e.object?.metadata?.name}`), []);
    assert.equal(await metric(survivor, 'plinth_workqueue_failures_total', 'name', 'garbage-collector'), 0);
  });
});
