/**
 * npm run bench:standby-reads: a list-heavy load (informer-style relists,
 * `resourceVersion=0`, of 200 ConfigMaps, 1 in 10 operations a patch) on a
 * Plinth server over a PostgreSQL 15 primary with one streaming standby
 * (pg_basebackup), run twice for 12 s each: without a read replica, then
 * with PLINTH_READ_REPLICA_URL naming the standby. Prints, per run, the
 * operations per second, how many of the stale reads the standby served
 * (plinth_stale_reads_total), and the CPU time of the primary's and the
 * standby's PostgreSQL processes (from /proc). Needs Debian's postgresql-15
 * (test/ha/support/streaming-standby.ts).
 */
import type { ChildProcess } from 'node:child_process';
import { request } from 'undici';
import { StreamingPair, skipStreaming } from '../test/ha/support/streaming-standby.js';
import { benchAgent, percentiles, progress, runBenchmark, runLoad, startServerProcess } from './bench-support.js';
import { processTreeCpuMs } from './process-cpu.js';
import { freePort } from '../test/watch/support/cluster.js';

const DB = 'plinth_bench';
const NS = 'bench';
const OBJECTS = 200;
const CONCURRENCY = 8;
const PHASE_MS = 12_000;

type Agent = Awaited<ReturnType<typeof benchAgent>>;

async function call(agent: Agent, base: string, method: 'GET' | 'POST' | 'PATCH', path: string, body?: unknown, contentType = 'application/json'): Promise<string> {
  const res = await request(`${base}${path}`, { method, dispatcher: agent, body: body === undefined ? undefined : JSON.stringify(body), headers: { 'content-type': contentType } });
  const text = await res.body.text();
  if (res.statusCode >= 300) throw new Error(`${method} ${path}: ${res.statusCode} ${text.slice(0, 200)}`);
  return text;
}

/** The stale reads each party served so far (plinth_stale_reads_total, lists and gets). */
async function staleReads(agent: Agent, base: string): Promise<{ standby: number; primary: number }> {
  const text = await call(agent, base, 'GET', '/metrics');
  const sum = (by: string) =>
    text
      .split('\n')
      .filter((l) => l.startsWith('plinth_stale_reads_total{') && l.includes(`served_by="${by}"`))
      .reduce((n, l) => n + Number(l.split(' ').pop()), 0);
  return { standby: sum('standby'), primary: sum('primary') };
}

interface Phase {
  name: string;
  opsPerSec: number;
  ops: number;
  p50: number;
  p99: number;
  errors: number;
  standbyShare: number;
  primaryCpuMs: number;
  standbyCpuMs: number;
}

async function phase(pair: StreamingPair, name: string, env: Record<string, string>, seed: boolean): Promise<Phase> {
  const port = await freePort();
  const server: ChildProcess = await startServerProcess({ DATABASE_URL: pair.url('primary', DB), PLINTH_DB_POOL_SIZE: '16', PLINTH_WORKERS: '1', ...env }, port);
  const base = `https://127.0.0.1:${port}`;
  const agent = await benchAgent({ connections: CONCURRENCY });
  try {
    const cms = `/api/v1/namespaces/${NS}/configmaps`;
    if (seed) {
      await call(agent, base, 'POST', '/api/v1/namespaces', { metadata: { name: NS } });
      for (let i = 0; i < OBJECTS; i++) await call(agent, base, 'POST', cms, { metadata: { name: `cm-${i}`, labels: { app: 'bench' } }, data: { v: 'x'.repeat(512) } });
    }
    if (env.PLINTH_READ_REPLICA_URL) {
      // Until the standby's first probes: its reads go to the primary.
      const deadline = Date.now() + 20_000;
      while (Date.now() < deadline) {
        const before = await staleReads(agent, base);
        await call(agent, base, 'GET', `${cms}?resourceVersion=0`);
        if ((await staleReads(agent, base)).standby > before.standby) break;
        await new Promise((r) => setTimeout(r, 200));
      }
    }
    progress(`${name}: ${CONCURRENCY} clients for ${PHASE_MS / 1000} s`);
    const reads0 = await staleReads(agent, base);
    const cpu0 = { primary: processTreeCpuMs(pair.postmasterPid('primary')!), standby: processTreeCpuMs(pair.postmasterPid('standby')!) };
    const load = await runLoad(CONCURRENCY, PHASE_MS, async (i) => {
      if (i % 10 === 0) await call(agent, base, 'PATCH', `${cms}/cm-${i % OBJECTS}`, { data: { n: String(i) } }, 'application/merge-patch+json');
      else await call(agent, base, 'GET', `${cms}?resourceVersion=0`);
    });
    const cpu1 = { primary: processTreeCpuMs(pair.postmasterPid('primary')!), standby: processTreeCpuMs(pair.postmasterPid('standby')!) };
    const reads1 = await staleReads(agent, base);
    const standby = reads1.standby - reads0.standby;
    const primary = reads1.primary - reads0.primary;
    const p = percentiles(load.latencies);
    return {
      name,
      opsPerSec: load.opsPerSec,
      ops: load.latencies.length,
      p50: p.p50,
      p99: p.p99,
      errors: load.errors,
      standbyShare: standby + primary > 0 ? standby / (standby + primary) : 0,
      primaryCpuMs: cpu1.primary - cpu0.primary,
      standbyCpuMs: cpu1.standby - cpu0.standby,
    };
  } finally {
    await agent.close();
    server.kill('SIGTERM');
    await new Promise((r) => server.once('exit', r));
  }
}

runBenchmark(async () => {
  if (skipStreaming) throw new Error(`bench:standby-reads ${skipStreaming}`);
  progress('starting a PostgreSQL 15 primary and a streaming standby');
  const pair = await StreamingPair.start(DB);
  try {
    const without = await phase(pair, 'primary only', {}, true);
    const withReplica = await phase(pair, 'with PLINTH_READ_REPLICA_URL', { PLINTH_READ_REPLICA_URL: pair.url('standby', DB) }, false);
    console.log(`standby reads (${new Date().toISOString().slice(0, 10)}): ${OBJECTS} ConfigMaps, ${CONCURRENCY} clients, 9 in 10 operations a resourceVersion=0 list, 1 a patch, ${PHASE_MS / 1000} s each`);
    console.log('| run | ops/s | p50 ms | p99 ms | errors | stale reads served by the standby | primary PostgreSQL CPU | primary CPU per 1,000 ops | standby PostgreSQL CPU |');
    console.log('|---|---|---|---|---|---|---|---|---|');
    for (const r of [without, withReplica]) {
      const cpu = (ms: number) => `${(ms / 1000).toFixed(1)} s (${((ms / PHASE_MS) * 100).toFixed(0)}% of a core)`;
      console.log(`| ${r.name} | ${r.opsPerSec.toFixed(0)} | ${r.p50.toFixed(1)} | ${r.p99.toFixed(1)} | ${r.errors} | ${(r.standbyShare * 100).toFixed(0)}% | ${cpu(r.primaryCpuMs)} | ${((r.primaryCpuMs / Math.max(1, r.ops)) * 1000).toFixed(0)} ms | ${cpu(r.standbyCpuMs)} |`);
    }
  } finally {
    await pair.stop();
  }
});
