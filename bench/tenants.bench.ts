import { type Agent, request } from 'undici';
import pg from 'pg';
import { benchAgent, percentiles, progress, runBenchmark, startBenchPostgres, startServerProcess, stopServerAndDatabase } from './bench-support.js';

const TENANTS = Number(process.env.BENCH_TENANTS ?? 1000);
const CONCURRENCY = 8;

async function call(base: string, agent: Agent, method: 'GET' | 'POST', path: string, body?: unknown): Promise<{ status: number; text: string }> {
  const res = await request(`${base}${path}`, { method, dispatcher: agent, body: body === undefined ? undefined : JSON.stringify(body), headers: { 'content-type': 'application/json' } });
  return { status: res.statusCode, text: await res.body.text() };
}

/** A gauge's value from a /metrics text. */
function metric(text: string, name: string): number {
  const m = new RegExp(`^${name} ([0-9.e+]+)`, 'm').exec(text);
  return m ? Number(m[1]) : Number.NaN;
}

/**
 * Creates BENCH_TENANTS tenants (each provisioned with its system
 * namespaces and upstream's default RBAC policy) through the API, then
 * prints the creation rate, the database bytes and server memory per tenant
 * (every tenant touched once, so its RBAC index is loaded), and a request's
 * latency in the last tenant against the first.
 */
async function main(): Promise<void> {
  const pgPort = 58700 + (process.pid % 400);
  const apiPort = 19700 + (process.pid % 400);
  const db = await startBenchPostgres('tenants', pgPort);
  const server = await startServerProcess({ DATABASE_URL: db.url, PLINTH_DB_POOL_SIZE: '16' }, apiPort);
  const base = `https://127.0.0.1:${apiPort}`;
  const agent = await benchAgent({ connections: CONCURRENCY });
  const pool = new pg.Pool({ connectionString: db.url, max: 1 });
  const dbBytes = async () => Number((await pool.query('SELECT pg_database_size(current_database()) AS n')).rows[0].n);
  // Where the bytes are: current objects (rows, TOAST and indexes), the change history (kept
  // PLINTH_HISTORY_RETENTION_SECONDS, then compacted: a time-bounded cost, not a per-tenant one), and the rest.
  const tableBytes = async () => {
    const { rows } = await pool.query("SELECT pg_total_relation_size('objects') AS objects, pg_total_relation_size('changes') AS changes");
    return { objects: Number(rows[0].objects), changes: Number(rows[0].changes) };
  };
  const memory = async () => {
    const text = (await call(base, agent, 'GET', '/metrics')).text;
    return { rss: metric(text, 'plinth_process_resident_memory_bytes'), heap: metric(text, 'plinth_nodejs_heap_size_used_bytes') };
  };
  try {
    const bytes0 = await dbBytes();
    const tables0 = await tableBytes();
    const mem0 = await memory();
    progress(`creating ${TENANTS} tenants, ${CONCURRENCY} at a time`);
    let next = 0;
    const t0 = Date.now();
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        for (let i = next++; i < TENANTS; i = next++) {
          const r = await call(base, agent, 'POST', '/apis/tenancy.plinth.dev/v1beta1/tenants', { apiVersion: 'tenancy.plinth.dev/v1beta1', kind: 'Tenant', metadata: { name: `t${i}` }, spec: {} });
          if (r.status !== 201) throw new Error(`tenant t${i}: ${r.status} ${r.text.slice(0, 200)}`);
          if (i % 100 === 99) progress(`${i + 1} tenants`);
        }
      }),
    );
    const seconds = (Date.now() - t0) / 1000;
    progress('touching every tenant once (loads its RBAC index)');
    for (let i = 0; i < TENANTS; i++) await call(base, agent, 'GET', `/clusters/t${i}/api/v1/namespaces/default/configmaps`);
    await pool.query('VACUUM ANALYZE');
    const bytes1 = await dbBytes();
    const tables1 = await tableBytes();
    const mem1 = await memory();
    const perTenant = (b: number) => `${(b / TENANTS / 1024).toFixed(1)} KiB`;
    const first: number[] = [];
    const last: number[] = [];
    for (let i = 0; i < 200; i++) {
      for (const [t, out] of [[`t0`, first], [`t${TENANTS - 1}`, last]] as const) {
        const s = process.hrtime.bigint();
        await call(base, agent, 'GET', `/clusters/${t}/api/v1/namespaces/default/configmaps`);
        out.push(Number(process.hrtime.bigint() - s) / 1e6);
      }
    }
    const objects = Number((await pool.query("SELECT count(*) AS n FROM objects WHERE tenant LIKE 't%'")).rows[0].n);
    const f = percentiles(first);
    const l = percentiles(last);
    console.log(`\ntenants benchmark: ${TENANTS} tenants on one PostgreSQL, one replica\n`);
    console.log(`created ${TENANTS} tenants in ${seconds.toFixed(1)} s = ${(TENANTS / seconds).toFixed(1)} tenants/s (${(objects / TENANTS).toFixed(0)} objects each: system namespaces and the default RBAC policy)`);
    console.log(`database bytes per tenant: ${perTenant(bytes1 - bytes0)} (target <= 50 KiB)`);
    const objectBytes = tables1.objects - tables0.objects;
    const changeBytes = tables1.changes - tables0.changes;
    console.log(`  of which current objects with their indexes: ${perTenant(objectBytes)}; change history (compacted after its retention): ${perTenant(changeBytes)}; the rest: ${perTenant(bytes1 - bytes0 - objectBytes - changeBytes)}`);
    console.log(`server memory per tenant (RSS, every tenant's RBAC index loaded): ${perTenant(mem1.rss - mem0.rss)} (target <= 50 KiB); V8 heap in use: ${perTenant(mem1.heap - mem0.heap)}`);
    console.log(`list in tenant t0: p50 ${f.p50.toFixed(2)} ms, p99 ${f.p99.toFixed(2)} ms; in tenant t${TENANTS - 1}: p50 ${l.p50.toFixed(2)} ms, p99 ${l.p99.toFixed(2)} ms`);
  } finally {
    await agent.close();
    await pool.end();
    await stopServerAndDatabase(server, db);
  }
}

runBenchmark(main);
