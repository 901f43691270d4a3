import { type ChildProcess, spawn } from 'node:child_process';
import net from 'node:net';
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import tls from 'node:tls';
import pg from 'pg';
import { Agent, request } from 'undici';
import { benchTls, percentiles, progress, startBenchPostgres, startServerProcess } from './bench-support.js';
import { openH2Watches } from './h2-watches.js';
import { histogramQuantiles, scrapeHistogram } from './prom-histogram.js';
import { startRawFanoutServer } from './raw-fanout-peer.js';
import { WatcherPool } from './watch-pool.js';

// Watch benchmark: write→event latency (1, 100, 1,000 watchers; one replica and two replicas
// through Redis), fan-out events/s, resident memory per idle watcher at 10,000 watchers, and the
// raw PostgreSQL LISTEN/NOTIFY ceiling, all in one run on this machine. Figures on stdout,
// progress on stderr.

const WRITES = Number(process.env.BENCH_WATCH_WRITES ?? 150);
const IDLE_WATCHERS = Number(process.env.BENCH_IDLE_WATCHERS ?? 10_000);
const H2_STREAMS_PER_SESSION = Number(process.env.BENCH_H2_STREAMS_PER_SESSION ?? 100);
/** BENCH_WATCHERS=1000 runs the latency phase at those watcher counts only (1, 100, 1000 by default). */
const LATENCY_WATCHERS = (process.env.BENCH_WATCHERS ?? '1,100,1000').split(',').map(Number);

interface Quantiles {
  p50: number;
  p99: number;
}

interface Row {
  name: string;
  p50: number;
  p99: number;
  n: number;
  note?: string;
  /** Latency runs: the write and the fan-out measured separately. */
  split?: { write: Quantiles; toLast: Quantiles; spread: Quantiles; dispatch: Quantiles; notify: Quantiles };
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
    srv.on('error', reject);
  });
}

/** CPU time (user + system, all threads) the process `pid` has used so far, in ms. */
function cpuMs(pid: number | undefined): number {
  if (pid === undefined) return NaN;
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // utime and stime are fields 14 and 15 of stat(5), in clock ticks (100 per second on Linux).
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

function rssKiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) : NaN;
}

class Api {
  private agent: Agent | undefined;
  constructor(readonly base: string) {}

  async call(method: 'GET' | 'POST' | 'PUT', path: string, body?: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
    const res = await request(`${this.base}${path}`, {
      method,
      body: body === undefined ? undefined : JSON.stringify(body),
      headers: { 'content-type': 'application/json' },
      dispatcher: (this.agent ??= new Agent({ connections: 32, keepAliveTimeout: 30_000, connect: await benchTls() })),
    });
    const json = (await res.body.json()) as Record<string, unknown>;
    return { status: res.statusCode, json };
  }

  /** GET `path` as text (e.g. /metrics). */
  async text(path: string): Promise<string> {
    const res = await request(`${this.base}${path}`, { dispatcher: (this.agent ??= new Agent({ connections: 32, keepAliveTimeout: 30_000, connect: await benchTls() })) });
    return res.body.text();
  }

  async revision(ns: string): Promise<string> {
    const r = await this.call('GET', `/api/v1/namespaces/${ns}/configmaps?limit=1`);
    return String((r.json.metadata as { resourceVersion: string }).resourceVersion);
  }

  close(): Promise<void> {
    return this.agent?.close() ?? Promise.resolve();
  }
}

let seqCounter = 0;

/**
 * Sequential writes on `writer`; per write, the arrival delay at every
 * watcher (the goal's figure), and separately: the write itself (create
 * round trip), the fan-out as the clients see it (create response → last
 * watcher; first → last watcher), and as the server times it (its
 * histograms: change into the watch cache → written to the last watcher's
 * connection, and the commit's NOTIFY → the same).
 */
async function latencyRun(
  label: string,
  writer: Api,
  readerBase: string,
  ns: string,
  watchers: number,
  writes: number,
  opts: { readerPid?: number; h2PerSession?: number } = {},
): Promise<Row> {
  const { readerPid, h2PerSession } = opts;
  const pool = new WatcherPool();
  const reader = new Api(readerBase);
  const rv = await writer.revision(ns);
  progress(`${label}: opening ${watchers} watchers`);
  const watchPath = `/api/v1/namespaces/${ns}/configmaps?watch=1&resourceVersion=${rv}`;
  if (h2PerSession) await pool.openH2(readerBase, watchPath, watchers, h2PerSession);
  else await pool.open(readerBase, watchPath, watchers);
  const samples: number[] = [];
  const rtts: number[] = [];
  const firsts: number[] = [];
  const spreads: number[] = [];
  const toLast: number[] = [];
  let missing = 0;
  let metricsBefore = '';
  let cpuBefore = NaN;
  for (let i = 0; i < writes + 10; i++) {
    if (i === 10) {
      metricsBefore = await reader.text('/metrics');
      cpuBefore = cpuMs(readerPid);
    }
    const seq = ++seqCounter;
    const t0 = performance.now();
    const res = await writer.call('POST', `/api/v1/namespaces/${ns}/configmaps`, { metadata: { name: `w-${seq}` }, data: { v: 'x' } });
    if (res.status !== 201) throw new Error(`create answered ${res.status}`);
    const rtt = performance.now() - t0;
    await pool.waitFor(seq, 2000);
    const got = pool.arrivalsOf(seq);
    missing += watchers - got.length;
    if (i >= 10) {
      rtts.push(rtt);
      for (const t of got) samples.push(t - t0);
      if (got.length) {
        const first = Math.min(...got);
        const last = Math.max(...got);
        firsts.push(first - t0);
        spreads.push(last - first);
        toLast.push(last - t0 - rtt);
      }
    }
    if (i % 50 === 0) progress(`  ${label}: ${i}/${writes + 10} writes`);
  }
  const cpu = cpuMs(readerPid) - cpuBefore;
  const metricsAfter = await reader.text('/metrics');
  await reader.close();
  pool.close();
  const server = (name: string) => histogramQuantiles(scrapeHistogram(metricsBefore, name), scrapeHistogram(metricsAfter, name));
  const p = percentiles(samples);
  const r = percentiles(rtts);
  const f = percentiles(firsts);
  const sp = percentiles(spreads);
  const perEvent = Number.isNaN(cpu) ? '' : `; server CPU ${(cpu / writes).toFixed(2)} ms per event (${((cpu / writes / watchers) * 1000).toFixed(1)} µs per watcher)`;
  const note = `write RTT p50 ${r.p50.toFixed(2)} ms; first watcher p50 ${f.p50.toFixed(2)} ms; first→last p50 ${sp.p50.toFixed(2)} p99 ${sp.p99.toFixed(2)} ms${perEvent}`;
  return {
    name: label,
    p50: p.p50,
    p99: p.p99,
    n: p.n,
    note: note + (missing ? `; ${missing} events missing` : ''),
    split: { write: r, toLast: percentiles(toLast), spread: sp, dispatch: server('plinth_watch_dispatch_seconds'), notify: server('plinth_watch_notify_to_written_seconds') },
  };
}

/**
 * The fan-out ceiling: a bare Node TLS server (bench/raw-fanout-server.ts, its own process, as the API server
 * is) writing one pre-framed event of `eventBytes` to `watchers` connections when told over IPC, read by the
 * same watcher pool. The delay from the IPC send to each arrival is the least a one-thread Node server can
 * take to write one event to that many TLS connections on this machine, under the same load.
 */
/**
 * The memory ceiling: resident memory per idle connection of the bare Node TLS server (same certificates,
 * client certificates requested, the same client), measured as memoryRun measures the API: what a
 * connection costs before any watch state.
 */
async function rawMemory(connections: number): Promise<{ perConnKiB: number; baseMiB: number; withMiB: number }> {
  const { child, port } = await startRawFanoutServer(0);
  const warm = new WatcherPool();
  const pool = new WatcherPool();
  try {
    await warm.open(`https://127.0.0.1:${port}`, '/watch', 100);
    await new Promise((r) => setTimeout(r, 2000));
    const before = rssKiB(child.pid!);
    await pool.open(`https://127.0.0.1:${port}`, '/watch', connections - 100, 500);
    await new Promise((r) => setTimeout(r, 3000));
    const after = rssKiB(child.pid!);
    return { perConnKiB: (after - before) / (connections - 100), baseMiB: before / 1024, withMiB: after / 1024 };
  } finally {
    pool.close();
    warm.close();
    child.kill();
  }
}

async function rawFanOut(watchers: number, writes: number, eventBytes: number): Promise<Row> {
  const { child, port } = await startRawFanoutServer(eventBytes);
  const pool = new WatcherPool();
  try {
    await pool.open(`https://127.0.0.1:${port}`, '/watch', watchers);
    const loops: number[] = [];
    let measuring = false;
    child.on('message', (m) => {
      const ms = (m as { loopMs?: number }).loopMs;
      if (measuring && ms !== undefined) loops.push(ms);
    });
    const samples: number[] = [];
    const spreads: number[] = [];
    let missing = 0;
    let cpuBefore = NaN;
    for (let i = 0; i < writes + 10; i++) {
      if (i === 10) cpuBefore = cpuMs(child.pid);
      const seq = ++seqCounter;
      measuring = i >= 10;
      const t0 = performance.now();
      child.send({ seq });
      await pool.waitFor(seq, 2000);
      const got = pool.arrivalsOf(seq);
      missing += watchers - got.length;
      if (i >= 10 && got.length) {
        for (const t of got) samples.push(t - t0);
        spreads.push(Math.max(...got) - Math.min(...got));
      }
      // As the API bench's writes, the next event follows a few milliseconds after the last arrival.
      await new Promise((r) => setTimeout(r, 3));
    }
    const p = percentiles(samples);
    const sp = percentiles(spreads);
    const cpu = cpuMs(child.pid) - cpuBefore;
    const lp = percentiles(loops);
    const note = `IPC send → arrival, ${eventBytes} B events; first→last p50 ${sp.p50.toFixed(2)} p99 ${sp.p99.toFixed(2)} ms; write loop p50 ${lp.p50.toFixed(2)} p99 ${lp.p99.toFixed(2)} ms; server CPU ${(cpu / writes).toFixed(2)} ms per event (${((cpu / writes / watchers) * 1000).toFixed(1)} µs per connection)${missing ? `; ${missing} events missing` : ''}`;
    return { name: `raw Node TLS fan-out, ${watchers} connections`, p50: p.p50, p99: p.p99, n: p.n, note };
  } finally {
    pool.close();
    child.kill();
  }
}

/** Bytes of the watch event line of configmap `name` in `ns` (what the API writes per watcher, before HTTP and TLS framing). */
async function eventBytes(api: Api, ns: string, name: string): Promise<number> {
  const r = await api.call('GET', `/api/v1/namespaces/${ns}/configmaps/${name}`);
  return Buffer.byteLength(`{"type":"ADDED","object":${JSON.stringify(r.json)}}\n`);
}

/** Bursts `writes` creates from 16 concurrent writers at `watchers` watchers; delivered events per second. */
async function fanOut(writer: Api, readerBase: string, ns: string, watchers: number, writes: number): Promise<{ eventsPerSec: number; events: number; seconds: number }> {
  const pool = new WatcherPool();
  await pool.open(readerBase, `/api/v1/namespaces/${ns}/configmaps?watch=1&resourceVersion=${await writer.revision(ns)}`, watchers);
  const first = seqCounter + 1;
  seqCounter += writes;
  let next = first;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (next < first + writes) {
        const seq = next++;
        await writer.call('POST', `/api/v1/namespaces/${ns}/configmaps`, { metadata: { name: `w-${seq}` }, data: { v: 'x' } });
      }
    }),
  );
  const deadline = performance.now() + 30_000;
  while (pool.totalArrivals() < writes * watchers && performance.now() < deadline) await new Promise((r) => setTimeout(r, 5));
  let last = t0;
  for (let s = first; s < first + writes; s++) for (const t of pool.arrivalsOf(s)) last = Math.max(last, t);
  const events = pool.totalArrivals();
  pool.close();
  const seconds = (last - t0) / 1000;
  return { eventsPerSec: events / seconds, events, seconds };
}

/** Raw PostgreSQL: the API's write statements, and the NOTIFY reaching `listeners` LISTEN connections. */
async function rawNotify(url: string, listeners: number, writes: number): Promise<Row> {
  const clients: pg.Client[] = [];
  const arrivals = new Map<number, number[]>();
  for (let i = 0; i < listeners; i++) {
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    await c.query('LISTEN plinth_changes');
    c.on('notification', (m) => {
      const rev = Number(m.payload);
      let l = arrivals.get(rev);
      if (!l) arrivals.set(rev, (l = []));
      l.push(performance.now());
    });
    clients.push(c);
  }
  const writer = new pg.Client({ connectionString: url });
  await writer.connect();
  const samples: number[] = [];
  for (let i = 0; i < writes + 10; i++) {
    const seq = ++seqCounter;
    const body = JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `w-${seq}`, namespace: 'raw' }, data: { v: 'x' } });
    const t0 = performance.now();
    const { rows } = await writer.query<{ r: string }>('SELECT plinth_create($1, $2, $3, $4, $5::jsonb) AS r', ['default', 'configmaps', 'raw', `w-${seq}`, body]);
    await writer.query('SELECT plinth_flush()');
    const rev = Number(rows[0].r);
    const deadline = performance.now() + 2000;
    while ((arrivals.get(rev)?.length ?? 0) < listeners && performance.now() < deadline) await new Promise((r) => setImmediate(r));
    if (i >= 10) for (const t of arrivals.get(rev) ?? []) samples.push(t - t0);
  }
  await writer.end();
  for (const c of clients) await c.end();
  const p = percentiles(samples);
  return { name: `raw PG LISTEN/NOTIFY, ${listeners} listener${listeners > 1 ? 's' : ''}`, p50: p.p50, p99: p.p99, n: p.n, note: 'write+flush → notification' };
}

async function startRedis(): Promise<{ url: string; proc: ChildProcess }> {
  const port = await freePort();
  const proc = spawn('/usr/bin/redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  for (let i = 0; i < 100; i++) {
    const ok = await new Promise<boolean>((r) => {
      const s = net.connect(port, '127.0.0.1', () => (s.end(), r(true)));
      s.on('error', () => r(false));
    });
    if (ok) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  return { url: `redis://127.0.0.1:${port}`, proc };
}

async function createDatabase(adminUrl: string, name: string): Promise<string> {
  const c = new pg.Client({ connectionString: adminUrl });
  await c.connect();
  await c.query(`CREATE DATABASE "${name}"`);
  await c.end();
  const u = new URL(adminUrl);
  u.pathname = `/${name}`;
  return u.toString();
}

async function stopProcess(p: ChildProcess): Promise<void> {
  if (p.exitCode !== null) return;
  const exited = new Promise((r) => p.once('exit', r));
  p.kill('SIGTERM');
  await exited;
}

async function memoryRun(base: string, pid: number, api: Api): Promise<{ perWatcherKiB: number; baseMiB: number; withMiB: number }> {
  await api.call('POST', '/api/v1/namespaces', { metadata: { name: 'idle' } });
  const rv = await api.revision('idle');
  const warm = new WatcherPool();
  await warm.open(base, `/api/v1/namespaces/idle/configmaps?watch=1&resourceVersion=${rv}`, 100);
  await new Promise((r) => setTimeout(r, 2000));
  const before = rssKiB(pid);
  progress(`memory: server RSS ${(before / 1024).toFixed(1)} MiB with 100 watchers; opening ${IDLE_WATCHERS}`);
  const pool = new WatcherPool();
  await pool.open(base, `/api/v1/namespaces/idle/configmaps?watch=1&resourceVersion=${rv}`, IDLE_WATCHERS - 100, 500);
  await new Promise((r) => setTimeout(r, 3000));
  const afterKiB = rssKiB(pid);
  pool.close();
  warm.close();
  return { perWatcherKiB: (afterKiB - before) / (IDLE_WATCHERS - 100), baseMiB: before / 1024, withMiB: afterKiB / 1024 };
}

/** Memory per idle watcher with the watches multiplexed as HTTP/2 streams (H2_STREAMS_PER_SESSION per connection, as client-go does), on a fresh replica. */
async function memoryRunH2(base: string, pid: number, api: Api): Promise<{ perWatcherKiB: number; baseMiB: number; withMiB: number; sessions: number }> {
  await api.call('POST', '/api/v1/namespaces', { metadata: { name: 'idle2' } });
  const path = '/api/v1/namespaces/idle2/configmaps?watch=1';
  const creds = await benchTls();
  const warm = await openH2Watches(base, path, 100, H2_STREAMS_PER_SESSION, creds);
  await new Promise((r) => setTimeout(r, 2000));
  const before = rssKiB(pid);
  progress(`memory (HTTP/2): server RSS ${(before / 1024).toFixed(1)} MiB with 100 watchers; opening ${IDLE_WATCHERS}, ${H2_STREAMS_PER_SESSION} per connection`);
  const watches = await openH2Watches(base, path, IDLE_WATCHERS - 100, H2_STREAMS_PER_SESSION, creds);
  await new Promise((r) => setTimeout(r, 3000));
  const afterKiB = rssKiB(pid);
  watches.close();
  warm.close();
  return { perWatcherKiB: (afterKiB - before) / (IDLE_WATCHERS - 100), baseMiB: before / 1024, withMiB: afterKiB / 1024, sessions: watches.sessions + warm.sessions };
}

function print(rows: Row[]): void {
  console.log('case                                              p50 ms   p99 ms   samples  note');
  for (const r of rows) {
    console.log(`${r.name.padEnd(48)} ${r.p50.toFixed(2).padStart(7)}  ${r.p99.toFixed(2).padStart(7)}  ${String(r.n).padStart(8)}  ${r.note ?? ''}`);
  }
}

/** The write and the fan-out of each latency run, separately (ms, p50 / p99). */
function printSplit(rows: Row[]): void {
  const q = (x: Quantiles) => `${x.p50.toFixed(2)} / ${x.p99.toFixed(2)}`.padStart(15);
  console.log('the write and the fan-out separately, p50 / p99 ms (srv: the server histograms, interpolated within their buckets)');
  console.log(`${'case'.padEnd(34)} ${'write RTT'.padStart(15)} ${'resp.→last w.'.padStart(15)} ${'first→last w.'.padStart(15)} ${'srv cache→last'.padStart(15)} ${'srv NOTIFY→last'.padStart(15)}`);
  for (const r of rows) {
    if (!r.split) continue;
    const s = r.split;
    console.log(`${r.name.padEnd(34)} ${q(s.write)} ${q(s.toLast)} ${q(s.spread)} ${q(s.dispatch)} ${q(s.notify)}`);
  }
}

/** BENCH_SERVER_NODE_OPTIONS (e.g. --cpu-prof) is passed to the single-replica server as NODE_OPTIONS, for profiling. */
function serverNodeOptions(): Record<string, string> {
  const o = process.env.BENCH_SERVER_NODE_OPTIONS;
  return o ? { NODE_OPTIONS: o } : {};
}

/** BENCH_ONLY=latency,h2latency,fanout,rawfanout,raw,memory,cluster runs a subset (all by default). */
const ONLY = process.env.BENCH_ONLY?.split(',');
const want = (part: string) => !ONLY || ONLY.includes(part);

async function main(): Promise<void> {
  const pgPort = await freePort();
  const db = await startBenchPostgres('watch', pgPort);
  const redis = await startRedis();
  const procs: ChildProcess[] = [];
  const apis: Api[] = [];
  const rows: Row[] = [];
  const out: string[] = [];
  try {
    const port1 = await freePort();
    progress('single replica: starting the server');
    // The memory phase opens IDLE_WATCHERS watches as one user of one tenant: raise the per-user and per-tenant watch limits to fit.
    const watchLimit = String(IDLE_WATCHERS + 1000);
    const single = await startServerProcess(
      { DATABASE_URL: db.url, PLINTH_DB_POOL_SIZE: '16', PLINTH_MAX_WATCHES_PER_TENANT: watchLimit, PLINTH_MAX_WATCHES_PER_USER: watchLimit, ...serverNodeOptions() },
      port1,
    );
    procs.push(single);
    const base1 = `https://127.0.0.1:${port1}`;
    const api1 = new Api(base1);
    apis.push(api1);
    await api1.call('POST', '/api/v1/namespaces', { metadata: { name: 'lat' } });
    if (want('latency')) {
      for (const n of LATENCY_WATCHERS) rows.push(await latencyRun(`1 replica, ${n} watcher${n > 1 ? 's' : ''}`, api1, base1, 'lat', n, WRITES, { readerPid: single.pid }));
    }
    if (want('h2latency')) {
      // As client-go opens watches: streams multiplexed over HTTP/2 connections rather than a connection each.
      const n = Math.max(...LATENCY_WATCHERS);
      rows.push(
        await latencyRun(`1 replica, ${n} HTTP/2 (${H2_STREAMS_PER_SESSION}/conn)`, api1, base1, 'lat', n, WRITES, {
          readerPid: single.pid,
          h2PerSession: H2_STREAMS_PER_SESSION,
        }),
      );
    }
    if (want('fanout')) {
      progress('fan-out: 1,000 watchers, 300 creates from 16 writers');
      await api1.call('POST', '/api/v1/namespaces', { metadata: { name: 'fan' } });
      const fan = await fanOut(api1, base1, 'fan', 1000, 300);
      out.push(`fan-out: ${fan.events} events to 1,000 watchers in ${fan.seconds.toFixed(2)} s = ${Math.round(fan.eventsPerSec).toLocaleString('en')} events/s`);
    }
    if (want('rawfanout')) {
      progress('raw Node TLS fan-out ceiling: 1,000 connections');
      const created = await api1.call('POST', '/api/v1/namespaces/lat/configmaps', { metadata: { name: `w-${++seqCounter}` }, data: { v: 'x' } });
      const name = (created.json.metadata as { name: string }).name;
      rows.push(await rawFanOut(1000, WRITES, await eventBytes(api1, 'lat', name)));
    }
    if (want('raw')) {
      progress('raw PostgreSQL LISTEN/NOTIFY ceiling');
      rows.push(await rawNotify(db.url, 1, WRITES));
      rows.push(await rawNotify(db.url, 100, Math.min(WRITES, 100)));
    }
    if (want('memory')) {
      progress(`memory: ${IDLE_WATCHERS} idle watchers on one replica`);
      const mem = await memoryRun(base1, single.pid!, api1);
      out.push(
        `memory: ${IDLE_WATCHERS.toLocaleString('en')} idle watchers, one TLS connection each: server RSS ${mem.baseMiB.toFixed(1)} → ${mem.withMiB.toFixed(1)} MiB = ${mem.perWatcherKiB.toFixed(1)} KiB per watcher (target <= 16 KiB)`,
      );
      progress(`memory: ${IDLE_WATCHERS} idle connections to the bare Node TLS server`);
      const raw = await rawMemory(IDLE_WATCHERS);
      out.push(
        `memory: ${IDLE_WATCHERS.toLocaleString('en')} idle connections to a bare Node TLS server (the ceiling, no watch state): RSS ${raw.baseMiB.toFixed(1)} → ${raw.withMiB.toFixed(1)} MiB = ${raw.perConnKiB.toFixed(1)} KiB per connection`,
      );
      progress(`memory: ${IDLE_WATCHERS} idle watchers as HTTP/2 streams on a fresh replica`);
      const port2 = await freePort();
      const fresh = await startServerProcess({ DATABASE_URL: db.url, PLINTH_DB_POOL_SIZE: '16', PLINTH_MAX_WATCHES_PER_TENANT: watchLimit, PLINTH_MAX_WATCHES_PER_USER: watchLimit }, port2);
      const api2 = new Api(`https://127.0.0.1:${port2}`);
      try {
        const h2 = await memoryRunH2(`https://127.0.0.1:${port2}`, fresh.pid!, api2);
        out.push(
          `memory: ${IDLE_WATCHERS.toLocaleString('en')} idle watchers as HTTP/2 streams (${H2_STREAMS_PER_SESSION} per connection, ${h2.sessions} connections): server RSS ${h2.baseMiB.toFixed(1)} → ${h2.withMiB.toFixed(1)} MiB = ${h2.perWatcherKiB.toFixed(1)} KiB per watcher (target <= 16 KiB)`,
        );
      } finally {
        await api2.close();
        await stopProcess(fresh);
      }
    }
    if (want('cluster')) {
      // Two replicas through Redis: writes on A, watchers on B.
      progress('two replicas: starting both on a fresh database with Redis');
      const clusterUrl = await createDatabase(db.adminUrl, 'plinth_cluster');
      const portA = await freePort();
      const portB = await freePort();
      const env = { DATABASE_URL: clusterUrl, REDIS_URL: redis.url, PLINTH_DB_POOL_SIZE: '16' };
      procs.push(await startServerProcess(env, portA));
      procs.push(await startServerProcess(env, portB));
      const apiA = new Api(`https://127.0.0.1:${portA}`);
      apis.push(apiA);
      await apiA.call('POST', '/api/v1/namespaces', { metadata: { name: 'lat' } });
      for (const n of [1, 100, 1000]) {
        rows.push(await latencyRun(`2 replicas via Redis, ${n} watcher${n > 1 ? 's' : ''}`, apiA, `https://127.0.0.1:${portB}`, 'lat', n, WRITES));
      }
    }

    console.log('\nwatch benchmark (this machine: 2 cores; durable PostgreSQL; server, Redis and clients share the cores)\n');
    console.log('write→event latency: from sending the create to the event arriving at each watcher\n');
    print(rows);
    console.log('');
    printSplit(rows);
    console.log('');
    for (const line of out) console.log(line);
    const at1000 = rows.find((r) => r.name === '1 replica, 1000 watchers');
    if (at1000) console.log(`p99 at 1,000 watchers on one replica: ${at1000.p99.toFixed(2)} ms (target <= 20 ms)`);
  } finally {
    for (const a of apis) await a.close();
    for (const p of procs) await stopProcess(p);
    redis.proc.kill('SIGTERM');
    await db.stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
