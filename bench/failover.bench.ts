/**
 * npm run bench:failover: two Plinth replicas on a three-host URL to etcd +
 * three PostgreSQL 15 under Patroni (ttl 6 s, loop_wait 1 s), 16 writers
 * (8 per replica) creating ConfigMaps and an informer per replica; for
 * synchronous and asynchronous replication, a switchover, a primary SIGKILL
 * and a primary SIGSTOP one after the other. With asynchronous replication
 * the standbys' WAL receivers are frozen for 3 s before each fault (and
 * killed after it), so the failover loses the last commits.
 *
 * Prints per fault: time from the fault to the first acknowledged write
 * after the outage, acknowledged writes lost, 503s, hangs or 500s,
 * resourceVersions handed out twice, 410s sent to the informers and
 * whether every informer converged on the listed state (watch events
 * missed). Needs the Debian packages postgresql-15, patroni, etcd-server
 * (test/ha/support/patroni-cluster.ts).
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import request from 'supertest';
import { connectSession } from '@plinth/storage';
import type { RunningServer } from '../apps/api/src/app/server.js';
import { TestRedis } from '../test/watch/support/cluster.js';
import { PatroniCluster, patroniInstalled } from '../test/ha/support/patroni-cluster.js';
import { Informer, RevisionLedger, startReplica, startWriters } from '../test/ha/support/ha-load.js';

const run = promisify(execFile);
const NS = 'bench';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

type Fault = 'switchover' | 'SIGKILL' | 'SIGSTOP';

interface Row {
  mode: string;
  fault: Fault;
  recoveredMs: number;
  lost: number;
  unavailable: number;
  problems: number;
  reused: number;
  expired: number;
  converged: boolean;
}

async function until(check: () => Promise<boolean> | boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await Promise.resolve().then(check).catch(() => false)) return true;
    await sleep(200);
  }
  return false;
}

async function listAll(base: string): Promise<Map<string, number>> {
  const res = await request(base).get(`/api/v1/namespaces/${NS}/configmaps`).timeout(10_000);
  if (res.status !== 200) throw new Error(`list: ${res.status}`);
  return new Map((res.body.items as { metadata: { name: string; resourceVersion: string } }[]).map((i) => [i.metadata.name, Number(i.metadata.resourceVersion)]));
}

async function walReceivers(pg: PatroniCluster, name: string, signal: NodeJS.Signals): Promise<void> {
  const pm = pg.postmasterPid(pg.node(name));
  if (!pm) return;
  const { stdout } = await run('pgrep', ['-P', String(pm), '-f', 'walreceiver']).catch(() => ({ stdout: '' }));
  for (const pid of stdout.split('\n').filter(Boolean).map(Number)) process.kill(pid, signal);
}

/** The end of the longest gap between acknowledgements after `from`, minus `from`. */
function recovery(ackTimes: number[], from: number): number {
  const times = ackTimes.filter((t) => t >= from - 200).sort((a, b) => a - b);
  let best = 0;
  let end = from;
  for (let i = 1; i < times.length; i++) {
    if (times[i] - times[i - 1] > best) {
      best = times[i] - times[i - 1];
      end = times[i];
    }
  }
  return end - from;
}

async function runMode(synchronous: boolean): Promise<Row[]> {
  const mode = synchronous ? 'synchronous' : 'asynchronous';
  // Strict: Patroni never lets the primary go on without a synchronous standby (non-strict mode does, and then loses).
  const pg = await PatroniCluster.start({ synchronous, strict: synchronous && process.env.BENCH_STRICT !== '0' });
  const redis = await TestRedis.start();
  const replicas: RunningServer[] = [];
  const rows: Row[] = [];
  try {
    const admin = await connectSession(pg.url('postgres'));
    await admin.query('CREATE DATABASE plinth_bench');
    await admin.end();
    for (let i = 0; i < 2; i++) replicas.push(await startReplica(pg.url('plinth_bench'), redis.url));
    await request(replicas[0].url).post('/api/v1/namespaces').send({ metadata: { name: NS } });
    const ledger = new RevisionLedger();
    const informers = replicas.map((r) => new Informer(r.url, NS, ledger));
    const writers = startWriters(replicas, NS, 8, ledger, 15_000);
    const { stats } = writers;
    let lostSoFar = 0;
    for (const fault of ['switchover', 'SIGKILL', 'SIGSTOP'] as Fault[]) {
      await pg.waitHealthy(90_000);
      await sleep(2000);
      const before = { unavailable: stats.statuses.get(503) ?? 0, problems: stats.problems.length, reused: ledger.reused.length, expired: informers.reduce((n, i) => n + i.expired, 0) };
      const primary = (await pg.primary())!;
      const standbys = pg.nodes.filter((n) => n.name !== primary).map((n) => n.name);
      if (!synchronous) {
        for (const s of standbys) await walReceivers(pg, s, 'SIGSTOP');
        await sleep(3000);
      }
      const at = Date.now();
      if (fault === 'switchover') await pg.switchover();
      else await pg.signalNode(pg.node(primary), fault);
      if (!synchronous) for (const s of standbys) await walReceivers(pg, s, 'SIGKILL');
      await until(async () => ((await pg.primary()) ?? primary) !== primary, 60_000);
      await until(() => stats.ackTimes.filter((t) => t > at).length > 30, 60_000);
      await sleep(2000);
      if (fault === 'SIGKILL') pg.startNode(pg.node(primary));
      if (fault === 'SIGSTOP') await pg.signalNode(pg.node(primary), 'SIGCONT');
      let state = new Map<string, number>();
      await until(async () => {
        state = await listAll(replicas[0].url);
        return true;
      }, 60_000);
      const lostNames = [...stats.acked].filter(([name, rv]) => state.get(name) !== rv);
      const lost = lostNames.length;
      if (lost > lostSoFar) console.log(`lost (${mode}, ${fault}): ${lostNames.slice(0, 5).map(([n, rv]) => `${n}@${rv}${state.has(n) ? ` now @${state.get(n)}` : ' missing'}`).join(', ')}`);
      const converged = await until(async () => {
        const s = await listAll(replicas[1].url);
        return informers.every((inf) => inf.store.size === s.size && [...s].every(([n, rv]) => inf.store.get(n)?.rv === rv));
      }, 20_000);
      rows.push({
        mode,
        fault,
        recoveredMs: recovery(stats.ackTimes, at),
        lost: lost - lostSoFar,
        unavailable: (stats.statuses.get(503) ?? 0) - before.unavailable,
        problems: stats.problems.length - before.problems,
        reused: ledger.reused.length - before.reused,
        expired: informers.reduce((n, i) => n + i.expired, 0) - before.expired,
        converged,
      });
      lostSoFar = lost;
      console.log(JSON.stringify(rows[rows.length - 1]));
    }
    await writers.stop();
    for (const i of informers) await i.stop();
    if (stats.problems.length > 0) console.log(`problems: ${stats.problems.slice(0, 5).join(' | ')}`);
  } finally {
    for (const r of replicas) await r.stop().catch(() => undefined);
    await redis.kill();
    await pg.stop();
  }
  return rows;
}

async function main(): Promise<void> {
  if (!patroniInstalled()) {
    console.log('bench:failover needs postgresql-15, patroni and etcd-server (Debian packages)');
    process.exit(1);
  }
  const rows = [...(await runMode(true)), ...(await runMode(false))];
  console.log('\nreplication   fault       first ack after fault  acked lost  503s  hangs/500s  rv reused  410s  informers converged');
  for (const r of rows) {
    console.log(
      `${r.mode.padEnd(13)} ${r.fault.padEnd(11)} ${`${(r.recoveredMs / 1000).toFixed(1)} s`.padStart(21)}  ${String(r.lost).padStart(10)}  ${String(r.unavailable).padStart(4)}  ${String(r.problems).padStart(10)}  ${String(r.reused).padStart(9)}  ${String(r.expired).padStart(4)}  ${r.converged ? 'yes' : 'NO'}`,
    );
  }
  process.exit(0);
}

await main();
