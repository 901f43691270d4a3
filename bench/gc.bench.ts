import { type Agent, request } from 'undici';
import { benchAgent, percentiles, progress, runBenchmark, startBenchPostgres, startServerProcess, stopServerAndDatabase } from './bench-support.js';

const N = Number(process.env.BENCH_GC_N ?? 10_000);
const CONCURRENCY = 8;
const POLL_MS = 100;

type Call = (method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown) => Promise<{ status: number; json: () => Record<string, unknown> }>;

function client(base: string, agent: Agent): Call {
  return async (method, path, body) => {
    const res = await request(`${base}${path}`, { method, dispatcher: agent, body: body === undefined ? undefined : JSON.stringify(body), headers: { 'content-type': 'application/json' } });
    const text = await res.body.text();
    return { status: res.statusCode, json: () => JSON.parse(text) as Record<string, unknown> };
  };
}

/** Creates `count` objects, CONCURRENCY at a time; `make(i)` gives the path and body of the i-th. */
async function createMany(call: Call, count: number, make: (i: number) => [string, unknown]): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      for (let i = next++; i < count; i = next++) {
        const [path, body] = make(i);
        const r = await call('POST', path, body);
        if (r.status !== 201) throw new Error(`create ${i}: ${r.status}`);
        if (i % 2000 === 1999) progress(`${i + 1} created`);
      }
    }),
  );
}

/** Polls `done` every POLL_MS; resolves with the seconds it took from `t0`. */
async function waitUntil(t0: number, done: () => Promise<boolean>, limitMs = 600_000): Promise<number> {
  while (!(await done())) {
    if (Date.now() - t0 > limitMs) throw new Error('not done within the limit');
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
  return (Date.now() - t0) / 1000;
}

/** Creates in tenant `other` one at a time until `stop()` is true; returns the latencies (ms). */
async function otherTenantCreates(call: Call, prefix: string, stop: () => boolean): Promise<number[]> {
  const samples: number[] = [];
  for (let i = 0; !stop(); i++) {
    const t = process.hrtime.bigint();
    const r = await call('POST', '/clusters/other/api/v1/namespaces/default/configmaps', { metadata: { name: `${prefix}-${i}` }, data: { k: 'v' } });
    if (r.status !== 201) throw new Error(`other tenant create: ${r.status}`);
    samples.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  return samples;
}

/** Background cascade: N dependents of one owner; seconds from the owner's DELETE until none is left. */
async function cascade(call: Call): Promise<number> {
  await call('POST', '/api/v1/namespaces', { metadata: { name: 'gc-bench' } });
  const owner = (await call('POST', '/api/v1/namespaces/gc-bench/configmaps', { metadata: { name: 'owner' } })).json() as { metadata: { uid: string } };
  const ref = { apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: owner.metadata.uid };
  progress(`creating ${N} dependents of one owner`);
  await createMany(call, N, (i) => ['/api/v1/namespaces/gc-bench/configmaps', { metadata: { name: `dep-${i}`, labels: { bench: 'dep' }, ownerReferences: [ref] } }]);
  progress('deleting the owner (propagationPolicy Background)');
  const t0 = Date.now();
  const del = await call('DELETE', '/api/v1/namespaces/gc-bench/configmaps/owner', { propagationPolicy: 'Background' });
  if (del.status !== 200) throw new Error(`owner delete: ${del.status}`);
  return waitUntil(t0, async () => ((await call('GET', '/api/v1/namespaces/gc-bench/configmaps?labelSelector=bench%3Ddep&limit=1')).json().items as unknown[]).length === 0);
}

/** A namespace holding N objects: seconds from its DELETE until it is gone, and other tenants' create latencies meanwhile. */
async function namespaceDeletion(call: Call): Promise<{ seconds: number; during: number[] }> {
  await call('POST', '/api/v1/namespaces', { metadata: { name: 'ns-bench' } });
  progress(`creating ${N} configmaps in one namespace`);
  await createMany(call, N, (i) => ['/api/v1/namespaces/ns-bench/configmaps', { metadata: { name: `cm-${i}` }, data: { k: 'v' } }]);
  progress('deleting the namespace');
  let gone = false;
  const during = otherTenantCreates(call, 'during', () => gone);
  const t0 = Date.now();
  const del = await call('DELETE', '/api/v1/namespaces/ns-bench');
  if (del.status >= 300) throw new Error(`namespace delete: ${del.status}`);
  const seconds = await waitUntil(t0, async () => (await call('GET', '/api/v1/namespaces/ns-bench')).status === 404);
  gone = true;
  return { seconds, during: await during };
}

/**
 * Garbage collection and namespace deletion at scale (issue 15): the time
 * for the collector to delete BENCH_GC_N dependents of one owner deleted in
 * the background, the time for a namespace holding BENCH_GC_N ConfigMaps to
 * disappear, and another tenant's create latency while that runs against
 * the same tenant's latency with the server otherwise idle.
 */
async function main(): Promise<void> {
  const pgPort = 59100 + (process.pid % 400);
  const apiPort = 20100 + (process.pid % 400);
  const db = await startBenchPostgres('gc', pgPort);
  const server = await startServerProcess({ DATABASE_URL: db.url, PLINTH_DB_POOL_SIZE: '16', PLINTH_TENANTS: 'other' }, apiPort);
  const agent = await benchAgent({ connections: CONCURRENCY + 2 });
  const call = client(`https://127.0.0.1:${apiPort}`, agent);
  try {
    const cascadeSeconds = await cascade(call);
    progress('other tenant, idle baseline');
    const idleUntil = Date.now() + 5000;
    const idle = await otherTenantCreates(call, 'idle', () => Date.now() > idleUntil);
    const ns = await namespaceDeletion(call);
    const i = percentiles(idle);
    const d = percentiles(ns.during);
    console.log(`\ngc benchmark: N = ${N}, one replica, durable PostgreSQL\n`);
    console.log(`background cascade: ${N} dependents of one owner gone ${cascadeSeconds.toFixed(1)} s after the owner's DELETE = ${(N / cascadeSeconds).toFixed(0)} dependents/s`);
    console.log(`namespace deletion: a namespace holding ${N} ConfigMaps gone ${ns.seconds.toFixed(1)} s after its DELETE = ${(N / ns.seconds).toFixed(0)} objects/s`);
    console.log(`another tenant's creates (one client): idle p50 ${i.p50.toFixed(2)} ms, p99 ${i.p99.toFixed(2)} ms (n=${i.n}); during the namespace deletion p50 ${d.p50.toFixed(2)} ms, p99 ${d.p99.toFixed(2)} ms (n=${d.n})`);
  } finally {
    await agent.close();
    await stopServerAndDatabase(server, db);
  }
}

runBenchmark(main);
