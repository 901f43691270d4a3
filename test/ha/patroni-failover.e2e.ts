import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import { connectSession } from '@plinth/storage';
import type { RunningServer } from '../../apps/api/src/server.js';
import { eventually } from '../support/eventually.js';
import { TestRedis } from '../watch/support/cluster.js';
import { PatroniCluster, patroniInstalled } from './support/patroni-cluster.js';
import { Informer, RevisionLedger, startReplica, startWriters } from './support/ha-load.js';

const run = promisify(execFile);
process.on('unhandledRejection', (e) => console.log('UNHANDLED', (e as Error).stack));
const skip = patroniInstalled() ? false : 'needs the Debian packages postgresql-15, patroni and etcd-server (.ci/run installs them)';
const NS = 'ha';
/** PLINTH_HA_SUITE=sync or async runs one of the two suites (each starts its own cluster). */
const only = (suite: string) => skip || (process.env.PLINTH_HA_SUITE && process.env.PLINTH_HA_SUITE !== suite ? 'PLINTH_HA_SUITE' : false);

/**
 * A Patroni cluster, Redis and two Plinth replicas: the first on a
 * three-host URL (`target_session_attrs=read-write`), the second, with
 * `viaHaproxy`, through HAProxy routing by Patroni's `/primary` (else on the
 * three-host URL too).
 */
async function setUp(synchronous: boolean, viaHaproxy = false): Promise<{ pg: PatroniCluster; redis: TestRedis; replicas: RunningServer[] }> {
  const pg = await PatroniCluster.start({ synchronous });
  const admin = await connectSession(pg.url('postgres'));
  await admin.query('CREATE DATABASE plinth_ha');
  await admin.end();
  if (viaHaproxy) await pg.startHaproxy();
  const redis = await TestRedis.start();
  const replicas = [await startReplica(pg.url('plinth_ha'), redis.url), await startReplica(viaHaproxy ? pg.haproxyUrl('plinth_ha') : pg.url('plinth_ha'), redis.url)];
  await request(replicas[0].url).post('/api/v1/namespaces').send({ metadata: { name: NS } }).expect(201);
  return { pg, redis, replicas };
}

async function tearDown(env: { pg: PatroniCluster; redis: TestRedis; replicas: RunningServer[] } | undefined): Promise<void> {
  if (!env) return;
  for (const r of env.replicas) await r.stop().catch(() => undefined);
  await env.redis.kill().catch(() => undefined);
  await env.pg.stop();
}

/** The ConfigMaps of the namespace as the replica lists them: name → resourceVersion. */
async function listAll(base: string): Promise<Map<string, number>> {
  const res = await request(base).get(`/api/v1/namespaces/${NS}/configmaps`).expect(200);
  return new Map((res.body.items as { metadata: { name: string; resourceVersion: string } }[]).map((i) => [i.metadata.name, Number(i.metadata.resourceVersion)]));
}

/** Every informer's cache ends up exactly the listed state (no object lost in the failover kept, none missing). */
async function assertInformersConverge(base: string, informers: Informer[]): Promise<Map<string, number>> {
  let state = new Map<string, number>();
  await eventually(
    async () => {
      state = await listAll(base);
      return informers.every((inf) => inf.store.size === state.size && [...state].every(([name, rv]) => inf.store.get(name)?.rv === rv));
    },
    { timeoutMs: 20_000, message: 'every informer cache equal to the listed state' },
  );
  const revisions = [...state.values()];
  assert.equal(new Set(revisions).size, revisions.length, 'every object has its own resourceVersion');
  return state;
}

/** Sends `signal` to the walreceiver processes of a standby (stops or resumes its replication). */
async function signalWalReceivers(pg: PatroniCluster, name: string, signal: NodeJS.Signals): Promise<void> {
  const pm = pg.postmasterPid(pg.node(name));
  if (!pm) return;
  const { stdout } = await run('pgrep', ['-P', String(pm), '-f', 'walreceiver']).catch(() => ({ stdout: '' }));
  for (const pid of stdout.split('\n').filter(Boolean).map(Number)) process.kill(pid, signal);
}

describe('high availability: Patroni, synchronous replication (one replica on a three-host URL, one through HAProxy)', { skip: only('sync'), timeout: 150_000 }, () => {
  let env: Awaited<ReturnType<typeof setUp>> | undefined;
  before(async () => {
    env = await setUp(true, true);
  });
  after(() => tearDown(env));

  it('follows a switchover and a primary SIGKILL under writers on two replicas: no acknowledged write lost, no revision reused, no 500, no hang', async () => {
    const { pg, replicas } = env!;
    const ledger = new RevisionLedger();
    const informers = replicas.map((r) => new Informer(r.url, NS, ledger));
    const writers = startWriters(replicas, NS, 4, ledger);
    await eventually(() => writers.stats.acked.size > 50, { timeoutMs: 20_000, message: 'writes acknowledged' });

    const first = await pg.primary();
    const switchedAt = Date.now();
    console.log(`# switchover at ${new Date(switchedAt).toISOString()}`);
    await pg.switchover();
    await eventually(async () => (await pg.primary()) !== undefined && (await pg.primary()) !== first, { timeoutMs: 30_000, message: 'a new primary' });
    await eventually(() => writers.stats.ackTimes.some((t) => t > switchedAt + 500) && writers.stats.ackTimes.filter((t) => t > switchedAt).length > 20, { timeoutMs: 30_000, message: 'writes acknowledged after the switchover' });

    await pg.waitHealthy(60_000);
    const second = await pg.primary();
    const killedAt = Date.now();
    console.log(`# kill at ${new Date(killedAt).toISOString()}`);
    await pg.signalNode(pg.node(second!), 'SIGKILL');
    await eventually(async () => (await pg.primary()) !== undefined && (await pg.primary()) !== second, { timeoutMs: 40_000, message: 'failover after SIGKILL' });
    await eventually(() => writers.stats.ackTimes.filter((t) => t > killedAt).length > 20, { timeoutMs: 30_000, message: 'writes acknowledged after the failover' });
    await writers.stop();

    const state = await assertInformersConverge(replicas[1].url, informers);
    for (const inf of informers) await inf.stop();
    const lost = [...writers.stats.acked].filter(([name, rv]) => state.get(name) !== rv);
    assert.deepEqual(lost, [], 'every acknowledged write survived');
    assert.deepEqual(ledger.reused, [], 'no resourceVersion handed out twice');
    assert.deepEqual(writers.stats.problems, [], 'no 500, no 503 without Retry-After, no hang');
    console.log(`# synchronous: ${writers.stats.acked.size} acknowledged, statuses ${JSON.stringify(Object.fromEntries(writers.stats.statuses))}`);
  });
});

describe('high availability: Patroni, asynchronous replication losing the last commits', { skip: only('async'), timeout: 150_000 }, () => {
  let env: Awaited<ReturnType<typeof setUp>> | undefined;
  before(async () => {
    env = await setUp(false);
  });
  after(() => tearDown(env));

  it('hands no resourceVersion out twice, and informers that saw lost revisions get 410 and relist', async () => {
    const { pg, replicas } = env!;
    const ledger = new RevisionLedger();
    const informers = replicas.map((r) => new Informer(r.url, NS, ledger));
    const writers = startWriters(replicas, NS, 4, ledger);
    await eventually(() => writers.stats.acked.size > 50, { timeoutMs: 20_000, message: 'writes acknowledged' });

    // Cut the standbys off (their WAL receivers frozen), write on for a while, then kill the primary.
    const primary = (await pg.primary())!;
    const standbys = pg.nodes.filter((n) => n.name !== primary).map((n) => n.name);
    for (const s of standbys) await signalWalReceivers(pg, s, 'SIGSTOP');
    const cutAt = Date.now();
    await eventually(() => writers.stats.ackTimes.filter((t) => t > cutAt).length > 40, { timeoutMs: 40_000, message: 'writes acknowledged while the standbys are cut off' });
    await pg.signalNode(pg.node(primary), 'SIGKILL');
    const killedAt = Date.now();
    // Killed rather than resumed: a resumed receiver would still read the WAL the primary had sent into its socket.
    // (The standby's postmaster restarts its processes and recovers from its own WAL.)
    for (const s of standbys) await signalWalReceivers(pg, s, 'SIGKILL');
    await eventually(async () => (await pg.primary()) !== undefined && (await pg.primary()) !== primary, { timeoutMs: 40_000, message: 'failover' });
    await eventually(() => writers.stats.ackTimes.filter((t) => t > killedAt).length > 50, { timeoutMs: 30_000, message: 'writes acknowledged on the new primary' });
    await writers.stop();
    assert.deepEqual(ledger.reused.slice(0, 10), [], `no resourceVersion handed out twice for different contents (${ledger.reused.length} were)`);

    const state = await assertInformersConverge(replicas[0].url, informers);
    for (const inf of informers) await inf.stop();
    const lost = [...writers.stats.acked].filter(([name, rv]) => state.get(name) !== rv).length;
    console.log(`# asynchronous: ${writers.stats.acked.size} acknowledged, ${lost} lost, 410s ${informers.map((i) => i.expired).join('/')}, statuses ${JSON.stringify(Object.fromEntries(writers.stats.statuses))}`);
    assert.ok(lost > 0, 'the failover lost acknowledged commits (the case under test)');
    assert.deepEqual(ledger.reused, [], 'no resourceVersion handed out twice for different contents');
    assert.ok(informers.every((i) => i.expired > 0), `every informer got 410 Expired and relisted (${informers.map((i) => i.expired).join('/')})`);
    assert.deepEqual(writers.stats.problems, [], 'no 500, no 503 without Retry-After, no hang');
  });
});
