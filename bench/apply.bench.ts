import { Agent, request } from 'undici';
import { applyConfiguration, applyMergePatch, type JsonObject, trackUpdate } from '@plinth/apimachinery';
import { configMapResource } from '../apps/api/src/kinds/configmap/configmap.resource.js';
import { fieldManagerScope } from '../apps/api/src/resource-store/field-tracking.js';
import { percentiles, progress, runLoad, startBenchPostgres, runBenchmark, startServerProcess, stopServerAndDatabase } from './bench-support.js';

const CONCURRENCY = 16;
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CPU_ITERATIONS = Number(process.env.BENCH_ITERATIONS ?? 5000);

/** A 5 KiB ConfigMap: 40 keys of 100-byte values, and labels. */
function configMap(name: string, version = 0): JsonObject {
  const data: Record<string, string> = {};
  for (let i = 0; i < 40; i++) data[`key-${i}`] = `${i === 0 ? version : 'v'}`.padEnd(100, 'x');
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'bench', labels: { app: 'bench', tier: 'x' } }, data };
}

/** Microseconds per call of `fn`, in process (no HTTP, no database). */
function cpuMicros(fn: (i: number) => void): number {
  for (let i = 0; i < 200; i++) fn(i);
  const start = process.hrtime.bigint();
  for (let i = 0; i < CPU_ITERATIONS; i++) fn(i);
  return Number(process.hrtime.bigint() - start) / 1000 / CPU_ITERATIONS;
}

function cpuFigures(): Array<[string, number]> {
  const scope = fieldManagerScope({ def: configMapResource, subresource: '' });
  const live = applyConfiguration(null, configMap('cm'), 'bench', false, scope);
  const created = configMap('cm');
  return [
    ['create: track managedFields (Update)', cpuMicros(() => trackUpdate(null, structuredClone(created), 'kubectl-create', scope))],
    ['create: structuredClone only (baseline)', cpuMicros(() => structuredClone(created))],
    ['update: merge patch of one key', cpuMicros((i) => applyMergePatch(live, { data: { 'key-0': String(i) } }))],
    ['update: merge patch + track managedFields', cpuMicros((i) => trackUpdate(live, applyMergePatch(live, { data: { 'key-0': String(i) } }) as JsonObject, 'patcher', scope))],
    ['update: server-side apply of the 5 KiB object', cpuMicros((i) => applyConfiguration(live, configMap('cm', i), 'bench', false, scope))],
  ];
}

async function main(): Promise<void> {
  progress(`in-process costs over ${CPU_ITERATIONS} iterations`);
  const cpu = cpuFigures();
  const pgPort = 57900 + (process.pid % 90);
  const apiPort = 18900 + (process.pid % 90);
  const db = await startBenchPostgres('apply', pgPort);
  const server = await startServerProcess({ DATABASE_URL: db.url, PLINTH_DB_POOL_SIZE: '32' }, apiPort);
  const base = `http://127.0.0.1:${apiPort}`;
  const agent = new Agent({ connections: CONCURRENCY, pipelining: 1, keepAliveTimeout: 30000 });
  const call = async (method: 'POST' | 'PATCH', path: string, body: string, type = 'application/json') => {
    const res = await request(`${base}${path}`, { method, body, headers: { 'content-type': type }, dispatcher: agent });
    await res.body.arrayBuffer();
    if (res.statusCode >= 300) throw new Error(`${method} ${path}: ${res.statusCode}`);
  };
  try {
    await call('POST', '/api/v1/namespaces', JSON.stringify({ metadata: { name: 'bench' } }));
    for (let i = 0; i < CONCURRENCY; i++) await call('POST', '/api/v1/namespaces/bench/configmaps?fieldManager=bench', JSON.stringify(configMap(`obj-${i}`)));
    const path = (i: number) => `/api/v1/namespaces/bench/configmaps/obj-${i % CONCURRENCY}`;
    progress(`HTTP creates of 5 KiB configmaps (managedFields tracked) for ${SECONDS}s`);
    const creates = await runLoad(CONCURRENCY, SECONDS * 1000, (i) => call('POST', '/api/v1/namespaces/bench/configmaps', JSON.stringify(configMap(`c-${i}`))));
    progress(`HTTP merge patches of one key for ${SECONDS}s`);
    const merges = await runLoad(CONCURRENCY, SECONDS * 1000, (i) => call('PATCH', `${path(i)}?fieldManager=bench`, JSON.stringify({ data: { 'key-0': `m${i}` } }), 'application/merge-patch+json'));
    progress(`HTTP server-side applies of the whole 5 KiB object (one key changed) for ${SECONDS}s`);
    const applies = await runLoad(CONCURRENCY, SECONDS * 1000, (i) => call('PATCH', `${path(i)}?fieldManager=bench&force=true`, JSON.stringify(configMap(`obj-${i % CONCURRENCY}`, i)), 'application/apply-patch+yaml'));
    console.log('\nserver-side apply benchmark (this machine)\n');
    console.log('in process (µs per operation)');
    for (const [name, us] of cpu) console.log(`  ${name.padEnd(48)} ${us.toFixed(1).padStart(8)}`);
    console.log('\nHTTP (16 keep-alive clients)                      ops/s     p50 ms   p99 ms   errors');
    for (const [name, run] of [['create 5 KiB configmap', creates], ['merge patch (one key)', merges], ['server-side apply (5 KiB config)', applies]] as const) {
      const p = percentiles(run.latencies);
      console.log(`  ${name.padEnd(46)} ${run.opsPerSec.toFixed(0).padStart(7)}  ${p.p50.toFixed(2).padStart(7)}  ${p.p99.toFixed(2).padStart(7)}   ${run.errors}`);
    }
    const trackShare = cpu[0][1] / (1e6 / creates.opsPerSec);
    console.log(`\napply / merge patch latency (p50) = ${(percentiles(applies.latencies).p50 / percentiles(merges.latencies).p50).toFixed(2)}x (target <= 2x)`);
    console.log(`managedFields tracking per create = ${cpu[0][1].toFixed(0)} µs of CPU, ${(trackShare * 100).toFixed(1)}% of one create's wall time at this rate (target <= 10% of creates/s)`);
  } finally {
    await agent.close();
    await stopServerAndDatabase(server, db);
  }
}

runBenchmark(main);
