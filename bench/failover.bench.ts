/**
 * npm run bench:failover: two Plinth replicas on a three-host URL to etcd +
 * three PostgreSQL 15 under Patroni (ttl 6 s, loop_wait 1 s; BENCH_PATRONI=default
 * for Patroni's own 30 s / 10 s / 10 s), 16 writers (8 per replica) creating
 * ConfigMaps and an informer per replica; for synchronous (synchronous_mode
 * and synchronous_mode_strict) and asynchronous replication, one fault after
 * another: a switchover, a primary SIGKILL (Patroni and PostgreSQL: machine
 * loss), a primary SIGSTOP (frozen), PostgreSQL alone killed (pg-SIGKILL,
 * Patroni alive); BENCH_FAULTS picks some (also patroni-SIGSTOP: Patroni
 * alone frozen past its ttl), and last the Redis master SIGKILLed under its
 * three Sentinels (redis-SIGKILL; once per mode, it is not restarted);
 * BENCH_MODES=sync or async one mode. With
 * asynchronous replication the standbys' WAL receivers are frozen for 3 s
 * before each fault (and killed after it), so the failover loses the last
 * commits.
 *
 * Prints per fault: time from the fault to the first acknowledged write
 * after the outage, acknowledged writes lost, 503s, the longest request
 * after the fault (and before it), requests unanswered within 15 s or
 * 500s, watch events missed (after each fault the writers pause and every
 * informer must equal the list within 20 s), 410s sent to the informers
 * and resourceVersions handed out twice; beside them, from the promotion
 * (Patroni's /history), the first commit of a raw PostgreSQL peer on the new
 * primary (bench/raw-pg-writer.ts: what the cluster itself allows), Plinth's
 * fence and Plinth's first acknowledgement; and from each fault until both
 * informers hold a write acknowledged after it (polled every 200 ms).
 * BENCH_DIAGNOSE=1 prints, for lost
 * writes, what each node holds of them. Needs the Debian packages
 * postgresql-15, patroni, etcd-server (test/ha/support/patroni-cluster.ts)
 * and redis-sentinel.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import request from 'supertest';
import { connectSession } from '@plinth/storage';
import type { RunningServer } from '../apps/api/src/app/server.js';
import { SentinelCluster } from '../test/ha/support/redis-sentinel-cluster.js';
import { PatroniCluster, patroniInstalled } from '../test/ha/support/patroni-cluster.js';
import { Informer, RevisionLedger, startReplica, startWriters } from '../test/ha/support/ha-load.js';
import { RawPgWriter } from './raw-pg-writer.js';

const run = promisify(execFile);
/** BENCH_PATRONI=default: Patroni's own timings (ttl 30, loop_wait 10, retry_timeout 10); else the short ones of the tests. */
const TIMINGS = process.env.BENCH_PATRONI === 'default' ? { ttl: 30, loopWait: 10, retryTimeout: 10 } : { ttl: 6, loopWait: 1, retryTimeout: 2 };
/** BENCH_FAULTS: a comma-separated subset (pg-SIGKILL: PostgreSQL alone killed, Patroni alive). */
const FAULTS = (process.env.BENCH_FAULTS ?? 'switchover,SIGKILL,SIGSTOP,pg-SIGKILL,redis-SIGKILL').split(',') as Fault[];
const NS = 'bench';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

type Fault = 'switchover' | 'SIGKILL' | 'SIGSTOP' | 'pg-SIGKILL' | 'patroni-SIGSTOP' | 'redis-SIGKILL';

interface Row {
  mode: string;
  fault: Fault;
  recoveredMs: number;
  lost: number;
  unavailable: number;
  problems: number;
  /** From the new primary's promotion (Patroni's history) to the first write acknowledged on it through Plinth. */
  plinthAddsMs: number | undefined;
  /** From the promotion to the first insert the raw PostgreSQL peer got acknowledged on the new primary (what the cluster allows). */
  peerMs: number | undefined;
  /** From the promotion to Plinth's fence of the new timeline (revision_epochs.fenced_at). */
  fenceMs: number | undefined;
  maxLatencyMs: number;
  /** The longest request in the same time before the fault (what the loaded host costs without one). */
  baselineLatencyMs: number;
  reused: number;
  expired: number;
  /** Objects on which an informer's cache differs from the list once the writers paused and it had 20 s to catch up. */
  missed: number;
  /** From the fault to the time both informers hold a write acknowledged after it (the fan-out working again). */
  watchDelayMs: number | undefined;
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

/** For lost writes: what each node holds of them (row revision), its timeline and fenced epochs. */
async function diagnose(pg: PatroniCluster, names: string[]): Promise<void> {
  for (const n of pg.nodes) {
    let c;
    try {
      c = await connectSession(pg.nodeUrl(n.name, 'plinth_bench'), { connectionTimeoutMillis: 3000 });
      const rows = await c.query<{ name: string; revision: number }>('SELECT name, revision FROM objects WHERE name = ANY($1)', [names]);
      const ch = await c.query<{ name: string; revision: number }>('SELECT name, revision FROM changes WHERE name = ANY($1)', [names]);
      const ep = await c.query('SELECT timeline, counter_found, raised_to, fenced_at FROM revision_epochs ORDER BY timeline');
      const tl = await c.query('SELECT pg_is_in_recovery() AS rec, plinth_timeline() AS tl, (SELECT value FROM revision_counter) AS counter');
      console.log(`  ${n.name}: ${JSON.stringify(tl.rows[0])} objects ${JSON.stringify(rows.rows)} changes ${JSON.stringify(ch.rows)} epochs ${JSON.stringify(ep.rows)}`);
    } catch (err) {
      console.log(`  ${n.name}: ${(err as Error).message}`);
    } finally {
      await c?.end().catch(() => undefined);
    }
  }
}

/** The newest timeline fenced after `after` (its counter raise) and when Patroni recorded its promotion. */
async function newestEpoch(pg: PatroniCluster, after: number): Promise<{ raisedTo: number; fencedAt: number; primary: string; promotedAt?: number } | undefined> {
  const name = await pg.primary();
  if (!name) return undefined;
  let c;
  try {
    c = await connectSession(pg.nodeUrl(name, 'plinth_bench'), { connectionTimeoutMillis: 3000 });
    const { rows } = await c.query<{ timeline: number; raised_to: number; fenced_at: Date }>('SELECT timeline, raised_to, fenced_at FROM revision_epochs ORDER BY timeline DESC LIMIT 1');
    const e = rows[0];
    if (!e || e.fenced_at.getTime() < after - 1000) return undefined;
    // Patroni's /history: [timeline, lsn, reason, time of the switch, new leader] per earlier timeline; the newest switch began this one.
    const h = (await (await fetch(`http://127.0.0.1:${pg.node(name).restPort}/history`, { signal: AbortSignal.timeout(2000) })).json()) as unknown[][];
    const last = h.find((x) => Number(x[0]) === e.timeline - 1);
    return { raisedTo: Number(e.raised_to), fencedAt: e.fenced_at.getTime(), primary: name, promotedAt: last?.[3] ? Date.parse(String(last[3])) : undefined };
  } catch {
    return undefined;
  } finally {
    await c?.end().catch(() => undefined);
  }
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
  const pg = await PatroniCluster.start({ synchronous, strict: synchronous && process.env.BENCH_STRICT !== '0', timings: TIMINGS });
  // Redis with three Sentinels (redis-sentinel): the redis-SIGKILL fault kills its master (once: it is not restarted).
  const redis = await SentinelCluster.start();
  const replicas: RunningServer[] = [];
  const rows: Row[] = [];
  let peer: RawPgWriter | undefined;
  try {
    const admin = await connectSession(pg.url('postgres'));
    await admin.query('CREATE DATABASE plinth_bench');
    await admin.end();
    for (let i = 0; i < 2; i++) replicas.push(await startReplica(pg.url('plinth_bench'), redis.url));
    const nodeNames = pg.nodes.map((n) => n.name);
    peer = await RawPgWriter.start(pg.nodeUrl((await pg.primary())!, 'plinth_bench'), nodeNames.map((n) => pg.nodeUrl(n, 'plinth_bench')));
    await request(replicas[0].url).post('/api/v1/namespaces').send({ metadata: { name: NS } });
    const ledger = new RevisionLedger();
    const informers = replicas.map((r) => new Informer(r.url, NS, ledger));
    const writers = startWriters(replicas, NS, 8, ledger, 15_000);
    const { stats } = writers;
    let lostSoFar = 0;
    const reported = new Set<string>();
    for (const fault of FAULTS) {
      await pg.waitHealthy(90_000);
      await sleep(2000);
      const caseStart = Date.now();
      const before = { unavailable: stats.statuses.get(503) ?? 0, problems: stats.problems.length, reused: ledger.reused.length, expired: informers.reduce((n, i) => n + i.expired, 0) };
      const primary = (await pg.primary())!;
      const standbys = pg.nodes.filter((n) => n.name !== primary).map((n) => n.name);
      const pgFault = fault !== 'redis-SIGKILL';
      if (!synchronous && pgFault) {
        for (const s of standbys) await walReceivers(pg, s, 'SIGSTOP');
        await sleep(3000);
      }
      const at = Date.now();
      const redisMaster = fault === 'redis-SIGKILL' ? await redis.masterPort() : 0;
      // The fan-out works again once both informers hold a write acknowledged after the fault.
      let watchDelayMs: number | undefined;
      const watchBack = until(() => {
        const after = stats.ackLog.find(([t]) => t > at);
        const name = after && [...stats.acked].find(([, rv]) => rv === after[1])?.[0];
        if (!name || !informers.every((i) => i.store.has(name))) return false;
        watchDelayMs = Date.now() - at;
        return true;
      }, 60_000);
      if (fault === 'redis-SIGKILL') await redis.signal(redisMaster, 'SIGKILL');
      else if (fault === 'switchover') await pg.switchover();
      else if (fault === 'pg-SIGKILL') await pg.signalNode(pg.node(primary), 'SIGKILL', { patroni: false });
      // Patroni alone frozen past its ttl (what a loaded host does to it): the leader key lapses while PostgreSQL still runs as primary.
      else if (fault === 'patroni-SIGSTOP') await pg.signalNode(pg.node(primary), 'SIGSTOP', { postgres: false });
      else await pg.signalNode(pg.node(primary), fault);
      if (!synchronous && pgFault) for (const s of standbys) await walReceivers(pg, s, 'SIGKILL');
      if (!pgFault) await until(async () => (await redis.masterPort()) !== redisMaster, 60_000);
      else await until(async () => ((await pg.primary()) ?? primary) !== primary, 60_000);
      await until(() => stats.ackTimes.filter((t) => t > at).length > 30, 60_000);
      await sleep(2000);
      if (fault === 'SIGKILL') pg.startNode(pg.node(primary));
      if (fault === 'SIGSTOP' || fault === 'patroni-SIGSTOP') await pg.signalNode(pg.node(primary), 'SIGCONT');
      // The writers pause: the list is then the truth to compare acknowledgements and informers with.
      await writers.pause();
      const caseEnd = Date.now();
      let state = new Map<string, number>();
      await until(async () => {
        state = await listAll(replicas[0].url);
        return true;
      }, 60_000);
      const lostNames = [...stats.acked].filter(([name, rv]) => state.get(name) !== rv);
      const lost = lostNames.length;
      if (lost > lostSoFar) {
        const fresh = lostNames.filter(([n]) => !reported.has(n));
        for (const [n] of fresh) reported.add(n);
        console.log(`lost (${mode}, ${fault}): ${fresh.slice(0, 8).map(([n, rv]) => `${n}@${rv}${state.has(n) ? ` now @${state.get(n)}` : ' missing'}`).join(', ')}`);
        if (process.env.BENCH_DIAGNOSE) await diagnose(pg, fresh.slice(0, 8).map(([n]) => n));
      }
      // The first write acknowledged by the new primary: a revision above the raise of the newest timeline fenced after the fault.
      await watchBack;
      const fresh = pgFault ? await newestEpoch(pg, at) : undefined;
      const firstOnNew = fresh ? stats.ackLog.find(([t, rv]) => t >= at && rv > fresh.raisedTo) : undefined;
      const peerFirst = fresh && peer ? peer.firstAckOn(nodeNames.indexOf(fresh.primary), at) : undefined;
      const mismatches = () => informers.reduce((n, inf) => n + [...state].filter(([name, rv]) => inf.store.get(name)?.rv !== rv).length + [...inf.store.keys()].filter((name) => !state.has(name)).length, 0);
      await until(() => mismatches() === 0, 20_000);
      const missed = mismatches();
      const latencies = stats.latencies.filter(([end]) => end >= at && end <= caseEnd + 100).map(([, ms]) => ms);
      const baseline = stats.latencies.filter(([end]) => end >= caseStart && end < at).map(([, ms]) => ms);
      rows.push({
        mode,
        fault,
        recoveredMs: firstOnNew ? firstOnNew[0] - at : recovery(stats.ackTimes, at),
        plinthAddsMs: firstOnNew && fresh?.promotedAt ? firstOnNew[0] - fresh.promotedAt : undefined,
        peerMs: peerFirst !== undefined && fresh?.promotedAt ? peerFirst - fresh.promotedAt : undefined,
        fenceMs: fresh?.promotedAt ? fresh.fencedAt - fresh.promotedAt : undefined,
        lost: lost - lostSoFar,
        unavailable: (stats.statuses.get(503) ?? 0) - before.unavailable,
        problems: stats.problems.length - before.problems,
        maxLatencyMs: Math.max(0, ...latencies),
        baselineLatencyMs: Math.max(0, ...baseline),
        reused: ledger.reused.length - before.reused,
        expired: informers.reduce((n, i) => n + i.expired, 0) - before.expired,
        missed,
        watchDelayMs,
      });
      writers.resume();
      lostSoFar = lost;
      console.log(JSON.stringify(rows[rows.length - 1]));
    }
    await writers.stop();
    await peer.stop();
    for (const i of informers) await i.stop();
    if (stats.problems.length > 0) console.log(`problems: ${stats.problems.slice(0, 5).join(' | ')}`);
  } finally {
    await peer?.stop();
    for (const r of replicas) await r.stop().catch(() => undefined);
    await redis.stop();
    await pg.stop();
  }
  return rows;
}

const fmt = (ms: number | undefined) => (ms === undefined ? '-' : `${(ms / 1000).toFixed(1)} s`);

async function main(): Promise<void> {
  if (!patroniInstalled()) {
    console.log('bench:failover needs postgresql-15, patroni and etcd-server (Debian packages)');
    process.exit(1);
  }
  const modes = (process.env.BENCH_MODES ?? 'sync,async').split(',');
  const rows = [...(modes.includes('sync') ? await runMode(true) : []), ...(modes.includes('async') ? await runMode(false) : [])];
  console.log(`\nPatroni ttl ${TIMINGS.ttl} s, loop_wait ${TIMINGS.loopWait} s, retry_timeout ${TIMINGS.retryTimeout} s; synchronous = synchronous_mode + synchronous_mode_strict`);
  console.log("promotion → raw PostgreSQL peer's first commit / Plinth's fence / Plinth's first ack (the promotion's time from Patroni's /history)");
  for (const r of rows) if (r.fault !== 'redis-SIGKILL') console.log(`  ${r.mode} ${r.fault}: ${fmt(r.peerMs)} / ${fmt(r.fenceMs)} / ${fmt(r.plinthAddsMs)}`);
  console.log('fault → both informers hold a write acknowledged after the fault (the fan-out through Redis again)');
  for (const r of rows) console.log(`  ${r.mode} ${r.fault}: ${fmt(r.watchDelayMs)}`);
  console.log('replication   fault       fault→first ack  promotion→first ack  acks lost  503s  max request (before)  hangs/500s  events missed  410s  rv reused');
  for (const r of rows) {
    console.log(
      `${r.mode.padEnd(13)} ${r.fault.padEnd(11)} ${`${(r.recoveredMs / 1000).toFixed(1)} s`.padStart(15)}  ${(r.plinthAddsMs === undefined ? '-' : `${(r.plinthAddsMs / 1000).toFixed(1)} s`).padStart(19)}  ${String(r.lost).padStart(9)}  ${String(r.unavailable).padStart(4)}  ${`${(r.maxLatencyMs / 1000).toFixed(1)} s (${(r.baselineLatencyMs / 1000).toFixed(1)} s)`.padStart(20)}  ${String(r.problems).padStart(10)}  ${String(r.missed).padStart(13)}  ${String(r.expired).padStart(4)}  ${String(r.reused).padStart(9)}`,
    );
  }
  process.exit(0);
}

await main();
