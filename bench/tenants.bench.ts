import { type Agent, request } from 'undici';
import pg from 'pg';
import { benchAgent, collectServerGarbage, GC_ON_SIGNAL_NODE_ARGS, percentiles, progress, runBenchmark, startBenchPostgres, startServerProcess, stopServerAndDatabase } from './bench-support.js';

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
  const server = await startServerProcess({ DATABASE_URL: db.url, PLINTH_DB_POOL_SIZE: '16' }, apiPort, { nodeArgs: GC_ON_SIGNAL_NODE_ARGS });
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
    await collectServerGarbage(server);
    const text = (await call(base, agent, 'GET', '/metrics')).text;
    return { rss: metric(text, 'plinth_process_resident_memory_bytes'), heap: metric(text, 'plinth_nodejs_heap_size_used_bytes') };
  };
  /** Bytes of every relation of the schema by name: a table's heap (with its free space and visibility maps), its TOAST (with the TOAST index), each index. */
  const relationBytes = async () => {
    const { rows } = await pool.query(`
      SELECT c.relname || CASE WHEN c.relkind = 'r' THEN ' (heap)' ELSE '' END AS name,
        pg_table_size(c.oid) - coalesce(pg_total_relation_size(nullif(c.reltoastrelid, 0)), 0) AS bytes,
        coalesce(pg_total_relation_size(nullif(c.reltoastrelid, 0)), 0) AS toast
      FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = 'public' AND c.relkind IN ('r', 'i')`);
    const out = new Map<string, number>();
    for (const r of rows as Array<{ name: string; bytes: string; toast: string }>) {
      out.set(r.name, Number(r.bytes));
      if (Number(r.toast) > 0) out.set(r.name.replace(' (heap)', ' (TOAST)'), Number(r.toast));
    }
    return out;
  };
  const measure = async () => ({ bytes: await dbBytes(), tables: await tableBytes(), relations: await relationBytes(), mem: await memory() });
  /** Creates tenants t<from>..t<to - 1> through the API, CONCURRENCY at a time, then touches each once (its RBAC index loads). */
  const createTenants = async (from: number, to: number) => {
    let next = from;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        for (let i = next++; i < to; i = next++) {
          const r = await call(base, agent, 'POST', '/apis/tenancy.plinth.dev/v1beta1/tenants', { apiVersion: 'tenancy.plinth.dev/v1beta1', kind: 'Tenant', metadata: { name: `t${i}` }, spec: {} });
          if (r.status !== 201) throw new Error(`tenant t${i}: ${r.status} ${r.text.slice(0, 200)}`);
          if (i % 100 === 99) progress(`${i + 1} tenants`);
        }
      }),
    );
    progress(`touching tenants t${from}..t${to - 1} once (loads each RBAC index)`);
    for (let i = from; i < to; i++) await call(base, agent, 'GET', `/clusters/t${i}/api/v1/namespaces/default/configmaps`);
    await pool.query('VACUUM ANALYZE');
  };
  try {
    // Two halves: the second half's growth is the marginal cost of a tenant, once fixed costs that fill up early
    // (the watch cache's window of recent changes, caches, pools) are already paid in the first half.
    const half = Math.floor(TENANTS / 2);
    const m0 = await measure();
    progress(`creating ${TENANTS} tenants, ${CONCURRENCY} at a time`);
    const t0 = Date.now();
    await createTenants(0, half);
    const creatingMs = Date.now() - t0;
    const m1 = await measure();
    const t1 = Date.now();
    await createTenants(half, TENANTS);
    const seconds = (creatingMs + Date.now() - t1) / 1000;
    const m2 = await measure();
    const perTenant = (b: number, n = TENANTS) => `${(b / n / 1024).toFixed(1)} KiB`;
    const marginal = (b: number) => perTenant(b, TENANTS - half);
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
    const objectBytes = (a: typeof m0, b: typeof m0) => b.tables.objects - a.tables.objects;
    const changeBytes = (a: typeof m0, b: typeof m0) => b.tables.changes - a.tables.changes;
    console.log(`database bytes per tenant: ${perTenant(m2.bytes - m0.bytes)} on average, ${marginal(m2.bytes - m1.bytes)} for each of the second ${TENANTS - half} (target <= 50 KiB)`);
    console.log(
      `  second half, of which current objects with their indexes: ${marginal(objectBytes(m1, m2))}; change history (compacted after its retention): ${marginal(changeBytes(m1, m2))}; the rest: ${marginal(m2.bytes - m1.bytes - objectBytes(m1, m2) - changeBytes(m1, m2))}`,
    );
    const grown = [...m2.relations].map(([name, b]) => [name, b - (m1.relations.get(name) ?? 0)] as const).filter(([, d]) => d >= 1024 * (TENANTS - half) * 0.05);
    console.log(`  second half by relation (each >= 0.05 KiB a tenant): ${grown.sort((a, b) => b[1] - a[1]).map(([name, d]) => `${name} ${marginal(d)}`).join(', ')}`);
    const rows = (await pool.query("SELECT type, count(*)::int AS n, avg(pg_column_size(c.*))::int AS bytes FROM changes c WHERE tenant = $1 GROUP BY type ORDER BY type", [`t${TENANTS - 1}`])).rows as Array<{ type: string; n: number; bytes: number }>;
    console.log(`  change rows of tenant t${TENANTS - 1}: ${rows.map((r) => `${r.n} ${r.type} of ${r.bytes} bytes`).join(', ')} (average row size, before page and index overhead)`);
    console.log(
      `server memory per tenant, every tenant's RBAC index loaded: RSS ${perTenant(m2.mem.rss - m0.mem.rss)} on average, ${marginal(m2.mem.rss - m1.mem.rss)} for each of the second half (target <= 50 KiB); V8 heap in use after a full collection ${perTenant(m2.mem.heap - m0.mem.heap)} on average, ${marginal(m2.mem.heap - m1.mem.heap)} second half`,
    );
    console.log(`list in tenant t0: p50 ${f.p50.toFixed(2)} ms, p99 ${f.p99.toFixed(2)} ms; in tenant t${TENANTS - 1}: p50 ${l.p50.toFixed(2)} ms, p99 ${l.p99.toFixed(2)} ms`);
  } finally {
    await agent.close();
    await pool.end();
    await stopServerAndDatabase(server, db);
  }
}

runBenchmark(main);
