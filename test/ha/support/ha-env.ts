import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import request from 'supertest';
import { connectSession } from '@plinth/storage';
import type { RunningServer } from '../../../apps/api/src/app/server.js';
import { eventually } from '../../support/eventually.js';
import { TestRedis } from '../../watch/support/cluster.js';
import { PatroniCluster, patroniInstalled } from './patroni-cluster.js';
import { type Informer, startReplica } from './ha-load.js';

const run = promisify(execFile);

/** Why the HA tests are skipped (their Debian packages are missing), or false. */
export const skipHa = patroniInstalled() ? false : 'needs the Debian packages postgresql-15, patroni and etcd-server (.ci/run installs them)';

/** The namespace the HA tests write in. */
export const NS = 'ha';

/** What a HA test runs on. */
export interface HaEnv {
  pg: PatroniCluster;
  redis: TestRedis;
  replicas: RunningServer[];
}

/**
 * A Patroni cluster, Redis and two Plinth replicas: the first on a
 * three-host URL (`target_session_attrs=read-write`), the second, with
 * `viaHaproxy`, through HAProxy routing by Patroni's `/primary` (else on the
 * three-host URL too).
 */
export async function setUp(synchronous: boolean, viaHaproxy = false): Promise<HaEnv> {
  // Synchronous means strict, as docs/operations.md requires: without it Patroni promotes with synchronous_standby_names empty.
  const pg = await PatroniCluster.start({ synchronous, strict: synchronous });
  const admin = await connectSession(pg.url('postgres'));
  await admin.query('CREATE DATABASE plinth_ha');
  await admin.end();
  if (viaHaproxy) await pg.startHaproxy();
  const redis = await TestRedis.start();
  const replicas = [await startReplica(pg.url('plinth_ha'), redis.url), await startReplica(viaHaproxy ? pg.haproxyUrl('plinth_ha') : pg.url('plinth_ha'), redis.url)];
  await request(replicas[0].url).post('/api/v1/namespaces').send({ metadata: { name: NS } }).expect(201);
  return { pg, redis, replicas };
}

export async function tearDown(env: HaEnv | undefined): Promise<void> {
  if (!env) return;
  for (const r of env.replicas) await r.stop().catch(() => undefined);
  await env.redis.kill().catch(() => undefined);
  await env.pg.stop();
}

/** The ConfigMaps of the namespace as the replica lists them: name → resourceVersion. */
export async function listAll(base: string): Promise<Map<string, number>> {
  const res = await request(base).get(`/api/v1/namespaces/${NS}/configmaps`).expect(200);
  return new Map((res.body.items as { metadata: { name: string; resourceVersion: string } }[]).map((i) => [i.metadata.name, Number(i.metadata.resourceVersion)]));
}

/** Every informer's cache ends up exactly the listed state (no object lost in the failover kept, none missing). */
export async function assertInformersConverge(base: string, informers: Informer[]): Promise<Map<string, number>> {
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
export async function signalWalReceivers(pg: PatroniCluster, name: string, signal: NodeJS.Signals): Promise<void> {
  const pm = pg.postmasterPid(pg.node(name));
  if (!pm) return;
  const { stdout } = await run('pgrep', ['-P', String(pm), '-f', 'walreceiver']).catch(() => ({ stdout: '' }));
  for (const pid of stdout.split('\n').filter(Boolean).map(Number)) process.kill(pid, signal);
}

