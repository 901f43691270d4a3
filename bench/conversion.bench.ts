import { request } from 'undici';
import { makeCertificates } from '../test/admission/support/webhook-server.js';
import { backendCrd, ConversionWebhookServer } from '../test/crd/support/conversion-webhook-server.js';
import { benchAgent, percentiles, progress, runBenchmark, runLoad, startBenchPostgres, startServerProcess, stopServerAndDatabase } from './bench-support.js';

/**
 * The cost of a CRD conversion webhook (a local HTTPS webhook converting
 * Backends between v1 `spec.hostPort` and v2 `spec.host` + `spec.port`; v1
 * is the storage version): gets and creates in the storage version (no
 * call) against the other version (one call per get, two per create); a
 * list of N objects in each (the other version's list is one batched
 * call); then the storage version migration of BENCH_MIGRATION_N objects
 * (default 10,000) after the storage version moves to v2, in objects per
 * second until the CRD's StorageVersionMigrated condition is True.
 */

const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 6);
const LIST_N = Number(process.env.BENCH_LIST_N ?? 500);
const MIGRATION_N = Number(process.env.BENCH_MIGRATION_N ?? 10_000);
const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const NS = 'bench';

async function main(): Promise<void> {
  const pgPort = 58300 + (process.pid % 400);
  const apiPort = 19300 + (process.pid % 400);
  const certs = await makeCertificates();
  const hook = await ConversionWebhookServer.start(certs, 0, { record: false });
  const db = await startBenchPostgres('conversion', pgPort);
  const server = await startServerProcess({ DATABASE_URL: db.url, PLINTH_DB_POOL_SIZE: '32', PLINTH_WEBHOOK_TRUSTED_TENANTS: 'default' }, apiPort);
  const base = `https://127.0.0.1:${apiPort}`;
  const agent = await benchAgent({ connections: CONCURRENCY, pipelining: 1, keepAliveTimeout: 30000 });
  const call = async (method: 'GET' | 'POST' | 'PUT', path: string, body?: unknown): Promise<any> => {
    const res = await request(`${base}${path}`, { method, body: body === undefined ? undefined : JSON.stringify(body), headers: { 'content-type': 'application/json' }, dispatcher: agent });
    const text = await res.body.text();
    if (res.statusCode >= 300) throw new Error(`${method} ${path}: ${res.statusCode} ${text.slice(0, 300)}`);
    return JSON.parse(text);
  };
  const path = (v: string, name = '') => `/apis/conv.example.com/${v}/namespaces/${NS}/backends${name ? `/${name}` : ''}`;
  const v1Body = (name: string, i: number) => ({ apiVersion: 'conv.example.com/v1', kind: 'Backend', metadata: { name }, spec: { hostPort: `host-${i}.example.com:${1000 + (i % 60000)}` } });
  const v2Body = (name: string, i: number) => ({ apiVersion: 'conv.example.com/v2', kind: 'Backend', metadata: { name }, spec: { host: `host-${i}.example.com`, port: 1000 + (i % 60000) } });
  try {
    await call('POST', '/api/v1/namespaces', { metadata: { name: NS } });
    await call('POST', CRDS, backendCrd(hook.url, certs.caBundle));
    for (let i = 0; ; i++) {
      try {
        await call('GET', path('v2'));
        break;
      } catch (err) {
        if (i > 100) throw err;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    progress(`creating ${LIST_N} objects in v1 (the storage version)`);
    await runCount(LIST_N, CONCURRENCY, (i) => call('POST', path('v1'), v1Body(`obj-${i}`, i)));

    const rows: Array<[string, number, { p50: number; p99: number }, number]> = [];
    for (const [label, v] of [
      ['get, storage version v1 (no call)', 'v1'],
      ['get, v2 (one webhook call)', 'v2'],
      ['get, storage version v1 (no call)', 'v1'],
      ['get, v2 (one webhook call)', 'v2'],
    ] as const) {
      progress(`${label}: ${CONCURRENCY} clients for ${SECONDS / 2}s`);
      const run = await runLoad(CONCURRENCY, (SECONDS * 1000) / 2, (i) => call('GET', path(v, `obj-${i % LIST_N}`)).then(() => undefined));
      rows.push([label, run.opsPerSec, percentiles(run.latencies), run.errors]);
    }
    let n = 0;
    for (const [label, v] of [
      ['create, storage version v1 (no call)', 'v1'],
      ['create, v2 (two webhook calls)', 'v2'],
      ['create, storage version v1 (no call)', 'v1'],
      ['create, v2 (two webhook calls)', 'v2'],
    ] as const) {
      progress(`${label}: ${CONCURRENCY} clients for ${SECONDS / 2}s`);
      const round = n++;
      const run = await runLoad(CONCURRENCY, (SECONDS * 1000) / 2, (i) => call('POST', path(v), (v === 'v1' ? v1Body : v2Body)(`c${round}-${i}`, i)).then(() => undefined));
      rows.push([label, run.opsPerSec, percentiles(run.latencies), run.errors]);
    }
    const merged = new Map<string, { ops: number[]; p50: number[]; p99: number[]; errors: number }>();
    for (const [label, ops, p, errors] of rows) {
      const m = merged.get(label) ?? { ops: [], p50: [], p99: [], errors: 0 };
      m.ops.push(ops);
      m.p50.push(p.p50);
      m.p99.push(p.p99);
      m.errors += errors;
      merged.set(label, m);
    }

    progress(`lists of ${LIST_N} objects (limit=${LIST_N}) in v1 and v2, alternating`);
    const listMs: Record<'v1' | 'v2', number[]> = { v1: [], v2: [] };
    for (let i = 0; i < 10; i++) {
      for (const v of ['v1', 'v2'] as const) {
        const t0 = performance.now();
        const list = await call('GET', `${path(v)}?limit=${LIST_N}`);
        listMs[v].push(performance.now() - t0);
        if (list.items.length !== LIST_N) throw new Error(`list ${v}: ${list.items.length} items`);
      }
    }

    const have = (await call('GET', `${path('v1')}?limit=1`)).metadata.remainingItemCount + 1;
    const toCreate = Math.max(0, MIGRATION_N - have);
    progress(`creating ${toCreate} more objects in v1 for the migration (${MIGRATION_N} in all)`);
    await runCount(toCreate, CONCURRENCY, (i) => call('POST', path('v1'), v1Body(`m-${i}`, i)));
    const total = (await call('GET', `${path('v1')}?limit=1`)).metadata.remainingItemCount + 1;
    progress(`switching the storage version to v2 and waiting for the migration of ${total} objects`);
    const crd = await call('GET', `${CRDS}/backends.conv.example.com`);
    crd.spec.versions[0].storage = false;
    crd.spec.versions[1].storage = true;
    const t0 = performance.now();
    await call('PUT', `${CRDS}/backends.conv.example.com`, crd);
    let condition: Record<string, string> | undefined;
    for (;;) {
      const cur = await call('GET', `${CRDS}/backends.conv.example.com`);
      condition = cur.status?.conditions?.find((c: { type: string }) => c.type === 'StorageVersionMigrated');
      if (condition?.status === 'True' || condition?.reason === 'MigrationFailed') break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const migrationS = (performance.now() - t0) / 1000;
    if (condition?.status !== 'True') throw new Error(`migration failed: ${condition?.message}`);

    const avg = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    console.log('\nCRD conversion webhook benchmark (this machine, durable PostgreSQL, local HTTPS webhook)\n');
    console.log('operation                                     ops/s    p50 ms   p99 ms   errors');
    for (const [label, m] of merged) {
      console.log(`${label.padEnd(44)} ${avg(m.ops).toFixed(0).padStart(6)}  ${avg(m.p50).toFixed(2).padStart(7)}  ${avg(m.p99).toFixed(2).padStart(7)}   ${m.errors}`);
    }
    const l1 = percentiles(listMs.v1);
    const l2 = percentiles(listMs.v2);
    console.log(`\nlist of ${LIST_N} in v1 (no call): p50 ${l1.p50.toFixed(1)} ms; in v2 (one batched call): p50 ${l2.p50.toFixed(1)} ms (+${(l2.p50 - l1.p50).toFixed(1)} ms, ${(((l2.p50 - l1.p50) / LIST_N) * 1000).toFixed(0)} µs per object)`);
    console.log(`storage version migration v1 -> v2: ${total} objects in ${migrationS.toFixed(1)} s = ${(total / migrationS).toFixed(0)} objects/s (${condition.message})`);
  } finally {
    await agent.close();
    await stopServerAndDatabase(server, db);
    await hook.close();
  }
}

/** Runs `fn(0..count-1)` with `concurrency` in flight. */
async function runCount(count: number, concurrency: number, fn: (i: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) await fn(next++);
    }),
  );
}

runBenchmark(main);
