import { Agent, request } from 'undici';
import pg from 'pg';
import { percentiles, progress, runLoad, startBenchPostgres, runBenchmark, startServerProcess, stopServerAndDatabase, benchAgent, benchTls } from './bench-support.js';

const CONCURRENCY = 32;
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const VALUE = 'x'.repeat(1024 - 120);

function configMap(name: string): string {
  return JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'bench' }, data: { v: VALUE } });
}

/**
 * The raw PostgreSQL ceiling: the statements an API create runs (the
 * namespace lookup of NamespaceLifecycle, the write function, the durability
 * barrier), driven
 * directly by 32 pg clients. `withLookup` false runs the write alone.
 */
async function rawCeiling(url: string, withLookup: boolean): Promise<{ opsPerSec: number; p50: number; p99: number }> {
  const pool = new pg.Pool({ connectionString: url, max: CONCURRENCY });
  const body = JSON.parse(configMap('x'));
  const prefix = withLookup ? 'rawl' : 'raw';
  const run = await runLoad(CONCURRENCY, SECONDS * 1000, async (i) => {
    body.metadata.name = `${prefix}-${i}`;
    if (withLookup) {
      await pool.query('SELECT revision, body FROM objects WHERE tenant = $1 AND resource = $2 AND namespace = $3 AND name = $4', ['default', 'namespaces', '', 'bench']);
    }
    await pool.query('SELECT plinth_create($1, $2, $3, $4, $5::jsonb)', ['default', 'configmaps', prefix, `${prefix}-${i}`, JSON.stringify(body)]);
    await pool.query('SELECT plinth_flush()');
  });
  await pool.end();
  const p = percentiles(run.latencies);
  return { opsPerSec: run.opsPerSec, p50: p.p50, p99: p.p99 };
}

/** Sum (seconds) and count of every series of histogram `name` in a /metrics text. */
function histogramTotals(text: string, name: string): { sum: number; count: number } {
  let sum = 0;
  let count = 0;
  for (const line of text.split('\n')) {
    if (line.startsWith(`${name}_sum`)) sum += Number(line.split(' ').pop());
    if (line.startsWith(`${name}_count`)) count += Number(line.split(' ').pop());
  }
  return { sum, count };
}

/** Time the server spent authenticating and authorizing, from its /metrics histograms. */
interface AuthTotals {
  authn: { sum: number; count: number };
  authz: { sum: number; count: number };
}

function authTotals(metricsText: string): AuthTotals {
  return { authn: histogramTotals(metricsText, 'plinth_authentication_duration_seconds'), authz: histogramTotals(metricsText, 'plinth_authorization_duration_seconds') };
}

/** Mean µs per request of authentication and authorization between two readings. */
function authMeans(before: AuthTotals, after: AuthTotals): { authnUs: number; authzUs: number } {
  const mean = (a: { sum: number; count: number }, b: { sum: number; count: number }) => ((b.sum - a.sum) / Math.max(1, b.count - a.count)) * 1e6;
  return { authnUs: mean(before.authn, after.authn), authzUs: mean(before.authz, after.authz) };
}

async function main(): Promise<void> {
  const pgPort = 57500 + (process.pid % 400);
  const apiPort = 18500 + (process.pid % 400);
  const db = await startBenchPostgres('write', pgPort);
  const server = await startServerProcess({ DATABASE_URL: db.url, PLINTH_DB_POOL_SIZE: '32' }, apiPort);
  const base = `https://127.0.0.1:${apiPort}`;
  const agent = await benchAgent({ connections: CONCURRENCY, pipelining: 1, keepAliveTimeout: 30000 });
  // A token-only client: trusts the CA but presents no certificate, so the bearer token authenticates.
  const tokenAgent = new Agent({ connections: CONCURRENCY, pipelining: 1, keepAliveTimeout: 30000, connect: { ca: (await benchTls()).ca } });
  let token = '';
  const callWith = async (dispatcher: Agent, auth: 'cert' | 'token', reset: boolean, method: 'GET' | 'POST', path: string, body?: string) => {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (auth === 'token') headers.authorization = `Bearer ${token}`;
    const res = await request(`${base}${path}`, { method, body, headers, dispatcher, reset });
    const text = await res.body.text();
    if (res.statusCode >= 300) throw new Error(`${method} ${path}: ${res.statusCode} ${text.slice(0, 200)}`);
    return text;
  };
  const call = (method: 'GET' | 'POST', path: string, body?: string) => callWith(agent, 'cert', false, method, path, body);
  try {
    await call('POST', '/api/v1/namespaces', JSON.stringify({ metadata: { name: 'bench' } }));
    progress(`HTTP creates: ${CONCURRENCY} keep-alive clients for ${SECONDS}s`);
    const beforeCert = authTotals(await call('GET', '/metrics'));
    const creates = await runLoad(CONCURRENCY, SECONDS * 1000, async (i) => void (await call('POST', '/api/v1/namespaces/bench/configmaps', configMap(`cm-${i}`))));
    const certAuth = authMeans(beforeCert, authTotals(await call('GET', '/metrics')));
    await call('POST', '/api/v1/namespaces/bench/serviceaccounts', JSON.stringify({ metadata: { name: 'bench' } }));
    // The ServiceAccount writes through RBAC (a RoleBinding to edit in its namespace), as a real workload would.
    await call(
      'POST',
      '/apis/rbac.authorization.k8s.io/v1/namespaces/bench/rolebindings',
      JSON.stringify({ metadata: { name: 'bench-edit' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'edit' }, subjects: [{ kind: 'ServiceAccount', name: 'bench', namespace: 'bench' }] }),
    );
    token = JSON.parse(await call('POST', '/api/v1/namespaces/bench/serviceaccounts/bench/token', JSON.stringify({ spec: {} }))).status.token;
    progress(`HTTPS creates with a ServiceAccount token: ${CONCURRENCY} keep-alive clients for ${SECONDS}s`);
    const beforeToken = authTotals(await call('GET', '/metrics'));
    const tokenCreates = await runLoad(CONCURRENCY, SECONDS * 1000, async (i) => void (await callWith(tokenAgent, 'token', false, 'POST', '/api/v1/namespaces/bench/configmaps', configMap(`tk-${i}`))));
    const tokenAuth = authMeans(beforeToken, authTotals(await call('GET', '/metrics')));
    progress(`HTTPS creates, a new TLS connection per request (client certificate) for ${SECONDS / 2}s`);
    const certPerConn = await runLoad(CONCURRENCY, (SECONDS * 1000) / 2, async (i) => void (await callWith(agent, 'cert', true, 'POST', '/api/v1/namespaces/bench/configmaps', configMap(`cc-${i}`))));
    progress(`HTTPS creates, a new TLS connection per request (token) for ${SECONDS / 2}s`);
    const tokenPerConn = await runLoad(CONCURRENCY, (SECONDS * 1000) / 2, async (i) => void (await callWith(tokenAgent, 'token', true, 'POST', '/api/v1/namespaces/bench/configmaps', configMap(`tc-${i}`))));
    progress(`HTTP gets for ${SECONDS / 2}s`);
    const gets = await runLoad(CONCURRENCY, (SECONDS * 1000) / 2, async (i) => void (await call('GET', `/api/v1/namespaces/bench/configmaps/cm-${i % 1000}`)));
    await call('POST', '/api/v1/namespaces', JSON.stringify({ metadata: { name: 'list100' } }));
    for (let i = 0; i < 100; i++) {
      await call('POST', '/api/v1/namespaces/list100/configmaps', configMap(`l-${i}`).replace('"bench"', '"list100"'));
    }
    progress(`HTTP lists of 100 objects for ${SECONDS / 2}s`);
    const lists = await runLoad(8, (SECONDS * 1000) / 2, async () => void (await call('GET', '/api/v1/namespaces/list100/configmaps')));
    progress(`raw PostgreSQL ceiling: namespace lookup + plinth_create() + plinth_flush() by ${CONCURRENCY} pg clients for ${SECONDS}s`);
    const raw = await rawCeiling(db.url, true);
    progress(`raw PostgreSQL: plinth_create() + plinth_flush() for ${SECONDS}s`);
    const rawWrite = await rawCeiling(db.url, false);
    const c = percentiles(creates.latencies);
    const g = percentiles(gets.latencies);
    const l = percentiles(lists.latencies);
    const tk = percentiles(tokenCreates.latencies);
    const cc = percentiles(certPerConn.latencies);
    const tc = percentiles(tokenPerConn.latencies);
    const rows = [
      ['API create (1 KiB configmap, 32 clients)', creates.opsPerSec, c.p50, c.p99, creates.errors],
      ['API create, SA token, kept-alive', tokenCreates.opsPerSec, tk.p50, tk.p99, tokenCreates.errors],
      ['API create, client cert, new TLS each', certPerConn.opsPerSec, cc.p50, cc.p99, certPerConn.errors],
      ['API create, SA token, new TLS each', tokenPerConn.opsPerSec, tc.p50, tc.p99, tokenPerConn.errors],
      ['API get', gets.opsPerSec, g.p50, g.p99, gets.errors],
      ['API list (100 objects, 8 clients)', lists.opsPerSec, l.p50, l.p99, lists.errors],
      ['raw PG: same statements as a create', raw.opsPerSec, raw.p50, raw.p99, 0],
      ['raw PG: write + barrier, no lookup', rawWrite.opsPerSec, rawWrite.p50, rawWrite.p99, 0],
    ] as const;
    console.log('\nwrite benchmark (this machine, durable PostgreSQL)\n');
    console.log('operation                                   ops/s     p50 ms   p99 ms   errors');
    for (const [name, ops, p50, p99, errs] of rows) {
      console.log(`${name.padEnd(42)} ${ops.toFixed(0).padStart(7)}  ${p50.toFixed(2).padStart(7)}  ${p99.toFixed(2).padStart(7)}   ${errs}`);
    }
    console.log(`\nHTTPS + HTTP/1.1 keep-alive; client certificate (default): identity read once per connection.`);
    console.log(`SA token vs client certificate creates/s = ${((tokenCreates.opsPerSec / creates.opsPerSec) * 100).toFixed(1)}% (token authentication: signature (cached) + ServiceAccount lookup per request)`);
    // The server's own histograms: time in authentication + authorization per request, against the mean create latency.
    const share = (a: { authnUs: number; authzUs: number }, meanMs: number) => (((a.authnUs + a.authzUs) / 1000 / meanMs) * 100).toFixed(2);
    const meanOf = (xs: number[]) => xs.reduce((x, y) => x + y, 0) / Math.max(1, xs.length);
    console.log(`auth cost per request (server histograms): client certificate (system:masters) authn ${certAuth.authnUs.toFixed(1)} µs + authz ${certAuth.authzUs.toFixed(1)} µs = ${share(certAuth, meanOf(creates.latencies))}% of a create; SA token + RBAC authn ${tokenAuth.authnUs.toFixed(1)} µs + authz ${tokenAuth.authzUs.toFixed(1)} µs = ${share(tokenAuth, meanOf(tokenCreates.latencies))}% of a create (goal <= 5%)`);
    console.log(`per-connection vs kept-alive creates/s: certificate ${((certPerConn.opsPerSec / creates.opsPerSec) * 100).toFixed(1)}%, token ${((tokenPerConn.opsPerSec / tokenCreates.opsPerSec) * 100).toFixed(1)}%`);
    console.log(`\nAPI creates / raw ceiling = ${((creates.opsPerSec / raw.opsPerSec) * 100).toFixed(1)}% (target >= 50%); p99 create ${c.p99.toFixed(1)} ms (target <= 50 ms)`);
  } finally {
    await agent.close();
    await tokenAgent.close();
    await stopServerAndDatabase(server, db);
  }
}

runBenchmark(main);
