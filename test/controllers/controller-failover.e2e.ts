import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { widgetCrd } from '../crd/crd-fixtures.js';
import { ReplicaProcess } from '../fault/support/replica-process.js';
import { kubectl, writeTestKubeconfig } from '../support/kubectl.js';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { WatchClient } from '../watch/support/watch-client.js';
import { eventually } from '../support/eventually.js';

const NS = 'gc';
const CONTROLLERS = ['garbage-collector', 'namespace-controller', 'crd-controller', 'resourcequota-controller', 'tenant-controller', 'root-ca-cert-publisher'];
/** Dependents of the owner whose cascade the leader is killed in. */
const DEPENDENTS = 1000;
/** How long a wait for a leader may take before the test gives up: liveness only (the handover time is printed, not asserted). */
const LEADER_WAIT_MS = 60_000;

async function call(base: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(`${base}${path}`, { method, headers: body ? { 'content-type': 'application/json' } : {}, body: body ? JSON.stringify(body) : undefined });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

/** The value of `name{label="value"}` in /metrics of `r` (undefined when absent or unreachable). */
async function metric(r: ReplicaProcess, name: string, label: string, value: string): Promise<number | undefined> {
  // Bounded: a stopped replica never answers.
  const res = await fetch(`${r.url}/metrics`, { signal: AbortSignal.timeout(2000) }).catch(() => undefined);
  if (!res || res.status !== 200) return undefined;
  const text = await res.text().catch(() => '');
  const line = text.split('\n').find((l) => l.startsWith(`${name}{`) && l.includes(`${label}="${value}"`));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

const leads = async (r: ReplicaProcess, controller: string) => (await metric(r, 'plinth_leader', 'controller', controller)) === 1;

/** The replica of `among` that leads `controller`, once one does. */
async function leaderOf(among: ReplicaProcess[], controller: string, timeoutMs = LEADER_WAIT_MS): Promise<ReplicaProcess> {
  let found: ReplicaProcess | undefined;
  await eventually(async () => {
    for (const r of among) if (await leads(r, controller)) found = r;
    return found !== undefined;
  }, { timeoutMs, message: `a leader of ${controller}` });
  return found!;
}

/** The state letter of process `pid` in /proc (`T`: stopped by a signal). */
function processState(pid: number): string {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0];
}

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

// Three real server processes in cluster mode (PostgreSQL + Redis): the leading one is SIGKILLed in the middle of a
// cascade; then the next leader is stopped (SIGSTOP) and resumed.
describe('controllers: one leader per controller across replica processes, failover mid-cascade, a leader that hangs', { timeout: 300_000 }, () => {
  let database: TestDatabase;
  const replicas: ReplicaProcess[] = [];
  const watches: WatchClient[] = [];

  before(async () => {
    const redisUrl = process.env.PLINTH_TEST_REDIS_URL;
    assert.ok(redisUrl, 'PLINTH_TEST_REDIS_URL is not set: run with test/run-tests.mjs (redis-server must be installed)');
    database = await createTestDatabase('ctrl_failover');
    // A replica is one process here (it is SIGKILLed and SIGSTOPped as one, its /metrics is its own): workers of
    // one host share the elections as replicas do, which test/workers/ proves.
    const env = { DATABASE_URL: database.url, REDIS_URL: redisUrl, PLINTH_WATCH_POLL_INTERVAL_MS: '300', PLINTH_WORKERS: '1' };
    replicas.push(await ReplicaProcess.start(env), await ReplicaProcess.start(env), await ReplicaProcess.start(env));
    assert.equal((await call(replicas[0].url, 'POST', '/api/v1/namespaces', { metadata: { name: NS } })).status, 201);
  });
  after(async () => {
    for (const w of watches) w.close();
    for (const r of replicas) {
      if (r.alive) r.proc.kill('SIGCONT');
      await r.kill().catch(() => undefined);
    }
    await database?.drop().catch(() => undefined);
  });

  it('elects exactly one replica per controller, which reports its work queue', async () => {
    for (const c of CONTROLLERS) {
      await leaderOf(replicas, c);
      const gauges = await Promise.all(replicas.map((r) => metric(r, 'plinth_leader', 'controller', c)));
      assert.deepEqual([...gauges].sort(), [0, 0, 1], `${c}: ${JSON.stringify(gauges)}`);
    }
    const gcLeader = await leaderOf(replicas, 'garbage-collector');
    assert.notEqual(await metric(gcLeader, 'plinth_workqueue_adds_total', 'name', 'garbage-collector'), undefined);
    assert.notEqual(await metric(gcLeader, 'plinth_workqueue_depth', 'name', 'garbage-collector'), undefined);
  });

  it('collects the dependents of owners deleted through either replica', async () => {
    for (const [i, r] of replicas.entries()) {
      const other = replicas[(i + 1) % replicas.length];
      const uid = await createConfigMap(r.url, `owner-${i}`);
      await createConfigMap(other.url, `dep-${i}-a`, { name: `owner-${i}`, uid });
      await createConfigMap(r.url, `dep-${i}-b`, { name: `owner-${i}`, uid });
      assert.equal((await call(r.url, 'DELETE', `/api/v1/namespaces/${NS}/configmaps/owner-${i}`)).status, 200);
      await eventually(async () => (await configMapNames(other.url)).every((n) => !n.startsWith(`dep-${i}-`)), { message: `dependents of owner-${i} collected` });
    }
  });

  it('serves a CRD created through a replica that does not run the CRD controller on that replica\'s next request; kubectl delete crd then api-resources there', async () => {
    const leader = await leaderOf(replicas, 'crd-controller');
    const other = replicas.find((r) => r !== leader)!;
    // The controller settles the CRD on another replica; the create is answered once this one serves it so.
    const created = await call(other.url, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', widgetCrd({ group: 'elected.example.com' }));
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.equal((await call(other.url, 'GET', `/apis/elected.example.com/v1/namespaces/${NS}/widgets`)).status, 200);
    const crd = (await call(other.url, 'GET', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.elected.example.com')).body;
    assert.ok(crd.status.conditions.some((c: { type: string; status: string }) => c.type === 'Established' && c.status === 'True'), JSON.stringify(crd.status));
    const kc = writeTestKubeconfig(other.url);
    const del = await kubectl(kc, ['delete', 'crd', 'widgets.elected.example.com']);
    assert.equal(del.code, 0, del.stderr);
    const listed = await kubectl(kc, ['api-resources', '--api-group=elected.example.com', '-o', 'name']);
    assert.equal(listed.code, 0, listed.stderr);
    assert.equal(listed.stdout.trim(), '');
  });

  it('a dependent cascade interrupted by killing the leading replica is finished by the other, each dependent deleted exactly once', async () => {
    const leader = await leaderOf(replicas, 'garbage-collector');
    const survivor = replicas.find((r) => r !== leader)!;
    const ownerUid = await createConfigMap(survivor.url, 'big-owner');
    const names = Array.from({ length: DEPENDENTS }, (_, i) => `member-${String(i).padStart(4, '0')}`);
    await inParallel(names, 16, (n) => createConfigMap(survivor.url, n, { name: 'big-owner', uid: ownerUid }));
    const listed = await call(survivor.url, 'GET', `/api/v1/namespaces/${NS}/configmaps`);
    const watch = await WatchClient.watch(survivor.url, `/api/v1/namespaces/${NS}/configmaps?resourceVersion=${listed.body.metadata.resourceVersion}`);
    watches.push(watch);

    // Deleted through the replica that survives; the leader starts collecting, and is killed once it has collected some dependents.
    assert.equal((await call(survivor.url, 'DELETE', `/api/v1/namespaces/${NS}/configmaps/big-owner`)).status, 200);
    await eventually(() => watch.events.filter((e) => e.type === 'DELETED' && e.object.metadata.name.startsWith('member-')).length >= 50, { timeoutMs: 30_000, message: 'the leader collects dependents' });
    leader.proc.kill('SIGKILL');
    await leader.exited;
    const killedAt = Date.now();
    const left = (await configMapNames(survivor.url)).filter((n) => n.startsWith('member-')).length;
    assert.ok(left > 0 && left < DEPENDENTS, `the kill came in the middle of the cascade (${left} of ${DEPENDENTS} dependents left)`);

    const next = await leaderOf(replicas.filter((r) => r.alive), 'garbage-collector');
    const handoverMs = Date.now() - killedAt;
    await eventually(async () => (await configMapNames(survivor.url)).every((n) => !n.startsWith('member-')), { timeoutMs: 120_000, message: 'every dependent collected' });
    console.log(`[controller-failover] ${left} of ${DEPENDENTS} dependents left at the kill; another replica led after ${handoverMs} ms`);

    // The watch (on the survivor, across the relay's failover too) saw each dependent deleted exactly once, and nothing else.
    await eventually(() => watch.events.filter((e) => e.type === 'DELETED').length >= DEPENDENTS + 1, { timeoutMs: 30_000, message: 'every deletion watched' });
    const deleted = watch.events.filter((e) => e.type === 'DELETED').map((e) => e.object.metadata.name as string);
    assert.deepEqual(deleted.filter((n) => n.startsWith('member-')).sort(), names);
    assert.deepEqual(deleted.filter((n) => !n.startsWith('member-')), ['big-owner']);
    assert.deepEqual(watch.events.filter((e) => e.type !== 'DELETED').map((e) => `${e.type} ${e.object?.metadata?.name}`), []);
    assert.equal(await metric(next, 'plinth_workqueue_failures_total', 'name', 'garbage-collector'), 0);
  });

  it('a leader that stops answering loses every controller to another replica while it is stopped, and steps down when it resumes', async () => {
    const live = replicas.filter((r) => r.alive);
    assert.equal(live.length, 2);
    const hung = await leaderOf(live, 'garbage-collector');
    const other = live.find((r) => r !== hung)!;
    const led = [];
    for (const c of CONTROLLERS) if (await leads(hung, c)) led.push(c);
    // Its process stops: its connections stay open, so only PostgreSQL's idle_session_timeout (the lease duration) frees its locks.
    hung.proc.kill('SIGSTOP');
    const stoppedAt = Date.now();
    try {
      // Taken over while the old leader is still stopped (it resumes only in `finally`): PostgreSQL ended its session.
      for (const c of led) await eventually(() => leads(other, c), { timeoutMs: LEADER_WAIT_MS, message: `${c} led by the other replica` });
      assert.equal(processState(hung.proc.pid!), 'T', 'the old leader was still stopped when the other took over');
      console.log(`[controller-failover] the other replica led ${led.join(', ')} ${Date.now() - stoppedAt} ms after the leader stopped`);
      const uid = await createConfigMap(other.url, 'owner-while-hung');
      await createConfigMap(other.url, 'dep-while-hung', { name: 'owner-while-hung', uid });
      assert.equal((await call(other.url, 'DELETE', `/api/v1/namespaces/${NS}/configmaps/owner-while-hung`)).status, 200);
      await eventually(async () => !(await configMapNames(other.url)).includes('dep-while-hung'), { message: 'the dependent collected by the new leader' });
    } finally {
      hung.proc.kill('SIGCONT');
    }
    // Resumed, it finds its session gone and stops leading; each controller has one leader again.
    await eventually(async () => (await Promise.all(CONTROLLERS.map((c) => metric(hung, 'plinth_leader', 'controller', c)))).every((v) => v === 0), { timeoutMs: 30_000, message: 'the resumed replica stepped down' });
    for (const c of CONTROLLERS) {
      const gauges = await Promise.all(live.map((r) => metric(r, 'plinth_leader', 'controller', c)));
      assert.deepEqual([...gauges].sort(), [0, 1], `${c}: ${JSON.stringify(gauges)}`);
    }
  });
});
