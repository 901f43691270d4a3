import { type ChildProcess } from 'node:child_process';
import { availableParallelism, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { Agent, request } from 'undici';
import { cpuDuring, type CpuSplit, postmasterPid } from './process-cpu.js';
import { benchAgent, benchDataDir, percentiles, progress, runBenchmark, runLoad, startBenchPostgres, startServerProcess } from './bench-support.js';
import { WatcherPool } from './watch-pool.js';
import { workersForThisHost } from '../apps/api/src/config/worker-count.js';

// PLINTH_WORKERS: the same server with 1 and then 2 worker processes on one port, back to back on one durable
// PostgreSQL: creates/s (32 HTTPS clients, 1 KiB ConfigMaps) and the write→event p99 at 1,000 watchers.
// BENCH_WORKER_COUNTS takes `default` too (PLINTH_WORKERS unset: the server's own rule for this host, which
// `taskset -c 0` or `-c 0,1` in front of npm run narrows to 1 or 2 CPUs); BENCH_WATCHERS=0 skips the fan-out.

const CONCURRENCY = 32;
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const WATCHERS = Number(process.env.BENCH_WATCHERS ?? 1000);
const WRITES = Number(process.env.BENCH_WRITES ?? 200);
/** Worker counts to run; 0 stands for `default` (PLINTH_WORKERS unset). */
const COUNTS = (process.env.BENCH_WORKER_COUNTS ?? '1,2').split(',').map((c) => (c === 'default' ? 0 : Number(c)));
const VALUE = 'x'.repeat(1024 - 120);

interface Result {
  workers: number;
  /** The server chose the count itself (PLINTH_WORKERS unset). */
  byDefault: boolean;
  creates: { opsPerSec: number; p50: number; p99: number; errors: number; cpu: CpuSplit; n: number; load: string };
  fanOut?: { p50: number; p99: number; n: number; missing: number; spreadP99: number; cpu: CpuSplit; load: string };
}

const load = () => loadavg().map((l) => l.toFixed(2)).join(' ');

/** POST/GET on `agent`; throws on a status of 300 or more. */
async function call(agent: Agent, base: string, method: 'GET' | 'POST', path: string, body?: unknown): Promise<string> {
  const res = await request(`${base}${path}`, { method, body: body === undefined ? undefined : JSON.stringify(body), headers: { 'content-type': 'application/json' }, dispatcher: agent });
  const text = await res.body.text();
  if (res.statusCode >= 300) throw new Error(`${method} ${path}: ${res.statusCode} ${text.slice(0, 200)}`);
  return text;
}

/** Waits until `n` distinct workers answer /metrics (a new connection each, so the port's scheduler rotates). */
async function waitForWorkers(base: string, n: number): Promise<void> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    const pids = new Set<string>();
    for (let i = 0; i < 4 * n; i++) {
      const agent = await benchAgent();
      try {
        const text = await call(agent, base, 'GET', '/metrics');
        pids.add(/^plinth_worker_info\{worker="\d+",pid="(\d+)"\}/m.exec(text)?.[1] ?? 'alone');
      } catch {
        // starting
      } finally {
        await agent.destroy();
      }
    }
    if (pids.size >= n) return;
    if (Date.now() > deadline) throw new Error(`only ${pids.size} of ${n} workers answered`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** 1,000 watchers (a TLS connection each, so spread over the workers), then WRITES sequential creates: arrival − send per watcher. */
async function fanOut(base: string, ns: string, pids: { serverPid: number; postgresPid: number }): Promise<Result['fanOut']> {
  const agent = await benchAgent({ connections: 1 });
  const pool = new WatcherPool();
  try {
    const list = JSON.parse(await call(agent, base, 'GET', `/api/v1/namespaces/${ns}/configmaps?limit=1`)) as { metadata: { resourceVersion: string } };
    progress(`  opening ${WATCHERS} watchers`);
    await pool.open(base, `/api/v1/namespaces/${ns}/configmaps?watch=1&resourceVersion=${list.metadata.resourceVersion}`, WATCHERS);
    const samples: number[] = [];
    const spreads: number[] = [];
    let missing = 0;
    const before = load();
    const { cpu } = await cpuDuring(pids, async () => {
      for (let i = 0; i < WRITES + 10; i++) {
        const t0 = performance.now();
        await call(agent, base, 'POST', `/api/v1/namespaces/${ns}/configmaps`, { metadata: { name: `w-${i + 1}` }, data: { v: 'x' } });
        await pool.waitFor(i + 1, 2000);
        const got = pool.arrivalsOf(i + 1);
        if (i < 10) continue;
        missing += WATCHERS - got.length;
        for (const t of got) samples.push(t - t0);
        if (got.length) spreads.push(Math.max(...got) - Math.min(...got));
        if (i % 50 === 0) progress(`  ${i}/${WRITES + 10} writes`);
      }
    });
    const p = percentiles(samples);
    return { p50: p.p50, p99: p.p99, n: p.n, missing, spreadP99: percentiles(spreads).p99, cpu, load: `${before} → ${load()}` };
  } finally {
    pool.close();
    await agent.close();
  }
}

async function createDatabase(adminUrl: string, name: string, template: string): Promise<string> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE "${name}"`);
  } finally {
    await client.end();
  }
  return template.replace(/\/plinth\?/, `/${name}?`);
}

async function stop(server: ChildProcess): Promise<void> {
  server.kill('SIGTERM');
  await new Promise((r) => server.once('exit', r));
}

async function runWith(requested: number, databaseUrl: string, postgresPid: number, port: number): Promise<Result> {
  const byDefault = requested === 0;
  // The server's rule for this host (the CPUs this process may use, a loopback DATABASE_URL).
  const workers = byDefault ? workersForThisHost(undefined, databaseUrl).workers : requested;
  progress(`PLINTH_WORKERS=${byDefault ? `(unset: ${workers})` : workers}: starting`);
  const env: Record<string, string> = { DATABASE_URL: databaseUrl, PLINTH_DB_POOL_SIZE: '16', PLINTH_SHUTDOWN_DELAY_SECONDS: '0' };
  if (!byDefault) env.PLINTH_WORKERS = String(workers);
  const server = await startServerProcess(env, port);
  const base = `https://127.0.0.1:${port}`;
  const agent = await benchAgent({ connections: CONCURRENCY, pipelining: 1, keepAliveTimeout: 30_000 });
  try {
    await waitForWorkers(base, workers);
    await call(agent, base, 'POST', '/api/v1/namespaces', { metadata: { name: 'bench' } });
    await call(agent, base, 'POST', '/api/v1/namespaces', { metadata: { name: 'fan' } });
    const pids = { serverPid: server.pid!, postgresPid };
    progress(`PLINTH_WORKERS=${workers}: creates, ${CONCURRENCY} keep-alive HTTPS clients for ${SECONDS}s`);
    const before = load();
    const body = (name: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'bench' }, data: { v: VALUE } });
    const { result, cpu } = await cpuDuring(pids, () => runLoad(CONCURRENCY, SECONDS * 1000, async (i) => void (await call(agent, base, 'POST', '/api/v1/namespaces/bench/configmaps', body(`cm-${i}`)))));
    const c = percentiles(result.latencies);
    const creates = { opsPerSec: result.opsPerSec, p50: c.p50, p99: c.p99, errors: result.errors, cpu, n: result.latencies.length, load: `${before} → ${load()}` };
    if (WATCHERS > 0) progress(`PLINTH_WORKERS=${workers}: write→event at ${WATCHERS} watchers, ${WRITES} writes`);
    return { workers, byDefault, creates, fanOut: WATCHERS > 0 ? await fanOut(base, 'fan', pids) : undefined };
  } finally {
    await agent.close();
    await stop(server);
  }
}

function print(results: Result[]): void {
  const per = (cpu: CpuSplit, n: number) => `${(cpu.server / n).toFixed(2)} + ${(cpu.postgres / n).toFixed(2)} + ${(cpu.client / n).toFixed(2)}`;
  console.log(`\nworkers benchmark (${availableParallelism()} CPUs for the server, PostgreSQL and the load generator; durable PostgreSQL; "d": PLINTH_WORKERS unset)\n`);
  console.log('workers  creates/s   p50 ms   p99 ms  errors  CPU ms/create server+PG+client   load average (1 5 15 min) before → after');
  for (const r of results) {
    const c = r.creates;
    console.log(`${`${r.byDefault ? 'd ' : ''}${r.workers}`.padStart(7)}  ${c.opsPerSec.toFixed(0).padStart(9)}  ${c.p50.toFixed(2).padStart(7)}  ${c.p99.toFixed(2).padStart(7)}  ${String(c.errors).padStart(6)}  ${per(c.cpu, c.n).padEnd(31)} ${c.load}`);
  }
  console.log(`\nwrite→event at ${WATCHERS} watchers (send of the create → arrival at each watcher; ${WRITES} sequential writes)\n`);
  console.log('workers   p50 ms   p99 ms   samples  missing  first→last p99 ms  CPU ms/event server+PG+client   load average before → after');
  for (const r of results) {
    const f = r.fanOut;
    if (!f) continue;
    console.log(`${String(r.workers).padStart(7)}  ${f.p50.toFixed(2).padStart(7)}  ${f.p99.toFixed(2).padStart(7)}  ${String(f.n).padStart(8)}  ${String(f.missing).padStart(7)}  ${f.spreadP99.toFixed(2).padStart(17)}  ${per(f.cpu, WRITES + 10).padEnd(30)} ${f.load}`);
  }
  console.log('\ngoal: write→event p99 <= 20 ms at 1,000 watchers');
}

async function main(): Promise<void> {
  const pgPort = 57900 + (process.pid % 100);
  const db = await startBenchPostgres('workers', pgPort);
  const postgresPid = postmasterPid(benchDataDir(db));
  const results: Result[] = [];
  try {
    for (const [i, n] of COUNTS.entries()) {
      const url = await createDatabase(db.adminUrl, `plinth_workers_${n}_${i}`, db.url);
      results.push(await runWith(n, url, postgresPid, 18900 + (process.pid % 100) + i));
    }
    print(results);
  } finally {
    await db.stop();
  }
}

runBenchmark(main);
