import { Agent, request } from 'undici';
import pg from 'pg';
import { createDatabase, ObjectStoreRepository, type WriteBatcherOptions } from '@plinth/storage';
import { cpus, loadavg } from 'node:os';
import { cpuDuring, type CpuSplit, postmasterPid } from './process-cpu.js';
import { benchDataDir, percentiles, progress, runLoad, startBenchPostgres, runBenchmark, startServerProcess, stopServerAndDatabase, benchAgent, benchTls } from './bench-support.js';
import { etcdAvailable, etcdPuts, startEtcd, stopEtcd } from './etcd-peer.js';
import { authMeans, authTotals, batchDistribution } from './write-metrics.js';
import { bareHttpsPosts } from './bare-https-peer.js';
import { pgStatementsFlags, printStatements, resetStatements, topStatements } from './pg-statements.js';
import { printCodecFigures } from './cbor-codec.js';
import { tracingCost } from './tracing-cost.js';

const CONCURRENCY = 32;
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const VALUE = 'x'.repeat(1024 - 120);
/**
 * BENCH_WRITE_QUICK=1 runs only the phases the goals compare (client-certificate creates, the same
 * creates with dryRun=All, the etcd peer, gets, lists and raw PostgreSQL inserts): a shorter run for
 * measuring before and after back to back.
 */
const QUICK = process.env.BENCH_WRITE_QUICK === '1';
/** BENCH_PG_STATEMENTS=1 also prints PostgreSQL's top statements per create and per get (bench/pg-statements.ts). */
/** BENCH_WRITE_TENANTS=32 adds a phase of the same creates spread over that many tenants (one tenant's batches go out one at a time). */
const TENANTS = Number(process.env.BENCH_WRITE_TENANTS ?? 0);
/** BENCH_WRITE_CBOR_ONLY=1 prints only the CBOR vs JSON figures of the encoding layer (bench/cbor-codec.ts), no server. */
const CBOR_ONLY = process.env.BENCH_WRITE_CBOR_ONLY === '1';
/** BENCH_WRITE_TRACING=1 prints only what tracing costs creates: off, sampling 0, sampling 100% to a local OTLP receiver (bench/tracing-cost.ts). */
const TRACING_ONLY = process.env.BENCH_WRITE_TRACING === '1';

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

/**
 * Raw PostgreSQL's durable single-row insert rate: the same 1 KiB JSON body
 * inserted into a table with a bigserial key (a free sequence: nothing
 * serialises the writers), one synchronously committed INSERT per
 * operation, by CONCURRENCY pg clients. This is the goal's yardstick.
 */
async function rawInsert(url: string): Promise<{ opsPerSec: number; p50: number; p99: number }> {
  const pool = new pg.Pool({ connectionString: url, max: CONCURRENCY });
  await pool.query('CREATE TABLE IF NOT EXISTS raw_insert (id bigserial PRIMARY KEY, body jsonb NOT NULL)');
  const body = configMap('raw-insert');
  const run = await runLoad(CONCURRENCY, SECONDS * 1000, async () => void (await pool.query('INSERT INTO raw_insert (body) VALUES ($1::jsonb)', [body])));
  await pool.end();
  const p = percentiles(run.latencies);
  return { opsPerSec: run.opsPerSec, p50: p.p50, p99: p.p99 };
}

/**
 * The storage layer alone (no HTTP, no admission): CONCURRENCY callers of
 * ObjectStoreRepository.create, each create durable before it resolves.
 * `batching` as the repository's; `{ maxBatch: 1, maxInFlight: CONCURRENCY }`
 * is the unbatched path (one transaction, commit and flush per write).
 */
async function storageCreates(url: string, label: string, batching: WriteBatcherOptions): Promise<{ opsPerSec: number; p50: number; p99: number; meanBatch: number }> {
  const db = createDatabase({ connectionString: url, maxConnections: CONCURRENCY });
  let batches = 0;
  let writes = 0;
  const objects = new ObjectStoreRepository(db, { ...batching, onBatch: (n) => ((batches += 1), (writes += n)) });
  const data = { v: VALUE };
  const run = await runLoad(CONCURRENCY, SECONDS * 1000, async (i) => {
    const name = `${label}-${i}`;
    await objects.create({ tenant: 'default', resource: 'configmaps', namespace: label, name }, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: label }, data });
  });
  await db.destroy();
  const p = percentiles(run.latencies);
  return { opsPerSec: run.opsPerSec, p50: p.p50, p99: p.p99, meanBatch: writes / Math.max(1, batches) };
}

/**
 * Prints the CPU each party spent per operation (server, PostgreSQL, this
 * benchmark's clients) and the rate the machine's cores could sustain at
 * that cost if nothing else ran: the bound any design on this machine
 * meets, set against the goal of half the raw insert rate.
 */
function printCpuBudget(rows: [string, CpuSplit, number][], rawInsertsPerSec: number): void {
  const cores = cpus().length;
  console.log(`\nCPU per operation, ms (server + PostgreSQL + benchmark client = total; bound = ${cores} cores / total):`);
  for (const [name, cpu, ops] of rows) {
    const per = (ms: number) => msPer(ms, ops);
    const total = per(cpu.server) + per(cpu.postgres) + per(cpu.client);
    const parts = `${per(cpu.server).toFixed(3)} + ${per(cpu.postgres).toFixed(3)} + ${per(cpu.client).toFixed(3)} = ${total.toFixed(3)}`;
    console.log(`  ${name.padEnd(34)} ${parts.padEnd(34)} bound ${((cores * 1000) / total).toFixed(0).padStart(6)}/s`);
  }
  console.log(`  (raw durable inserts: ${rawInsertsPerSec.toFixed(0)}/s)`);
}

type Call = (dispatcher: Agent, auth: 'cert' | 'token', reset: boolean, method: 'GET' | 'POST', path: string, body?: string) => Promise<string>;
type Load = Awaited<ReturnType<typeof runLoad>>;

/** The authentication variants (ServiceAccount token through RBAC; a new TLS connection per request); skipped by BENCH_WRITE_QUICK. */
async function authPhases(callWith: Call, agent: Agent, tokenAgent: Agent, setToken: (t: string) => void) {
  const call = (method: 'GET' | 'POST', path: string, body?: string) => callWith(agent, 'cert', false, method, path, body);
  await call('POST', '/api/v1/namespaces/bench/serviceaccounts', JSON.stringify({ metadata: { name: 'bench' } }));
  // The ServiceAccount writes through RBAC (a RoleBinding to edit in its namespace), as a real workload would.
  await call(
    'POST',
    '/apis/rbac.authorization.k8s.io/v1/namespaces/bench/rolebindings',
    JSON.stringify({ metadata: { name: 'bench-edit' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'edit' }, subjects: [{ kind: 'ServiceAccount', name: 'bench', namespace: 'bench' }] }),
  );
  setToken(JSON.parse(await call('POST', '/api/v1/namespaces/bench/serviceaccounts/bench/token', JSON.stringify({ spec: {} }))).status.token);
  progress(`HTTPS creates with a ServiceAccount token: ${CONCURRENCY} keep-alive clients for ${SECONDS}s`);
  const beforeToken = authTotals(await call('GET', '/metrics'));
  const tokenCreates = await runLoad(CONCURRENCY, SECONDS * 1000, async (i) => void (await callWith(tokenAgent, 'token', false, 'POST', '/api/v1/namespaces/bench/configmaps', configMap(`tk-${i}`))));
  const tokenAuth = authMeans(beforeToken, authTotals(await call('GET', '/metrics')));
  progress(`HTTPS creates, a new TLS connection per request (client certificate) for ${SECONDS / 2}s`);
  const certPerConn = await runLoad(CONCURRENCY, (SECONDS * 1000) / 2, async (i) => void (await callWith(agent, 'cert', true, 'POST', '/api/v1/namespaces/bench/configmaps', configMap(`cc-${i}`))));
  progress(`HTTPS creates, a new TLS connection per request (token) for ${SECONDS / 2}s`);
  const tokenPerConn = await runLoad(CONCURRENCY, (SECONDS * 1000) / 2, async (i) => void (await callWith(tokenAgent, 'token', true, 'POST', '/api/v1/namespaces/bench/configmaps', configMap(`tc-${i}`))));
  return { tokenCreates, tokenAuth, certPerConn, tokenPerConn };
}

/** The etcd peer's durable puts (same load, same client), or undefined with a note when no `etcd` is on the PATH. */
async function etcdPhase(port: number): Promise<{ run: Load; cpu: CpuSplit } | undefined> {
  if (!etcdAvailable()) {
    progress('etcd: not on the PATH, the peer is skipped (Debian: apt-get install etcd-server)');
    return undefined;
  }
  const peer = await startEtcd(port, port + 1);
  try {
    const { result, cpu } = await etcdPuts(peer, CONCURRENCY, SECONDS * 1000, 1024);
    return { run: result, cpu };
  } finally {
    await stopEtcd(peer);
  }
}

/**
 * The most creates/s the machine's cores could sustain if Plinth's server
 * cost no more per request than the bare node:https server while
 * PostgreSQL and the client cost what this run's API creates did, set
 * against etcd's puts/s of the same run: whether even a server that only
 * answers HTTPS could reach etcd's rate at PostgreSQL's current write cost.
 */
function printTransportBound(createsCpu: CpuSplit, createsN: number, bare: { result: Load; cpu: CpuSplit }, etcdPutsPerSec: number | undefined): void {
  const cores = cpus().length;
  const bareServer = msPer(bare.cpu.server, bare.result.latencies.length);
  const [server, postgres, client] = [createsCpu.server, createsCpu.postgres, createsCpu.client].map((ms) => msPer(ms, createsN));
  const bound = (cores * 1000) / (bareServer + postgres + client);
  const vsEtcd = etcdPutsPerSec ? `; / etcd puts/s ${etcdPutsPerSec.toFixed(0)} = ${(bound / etcdPutsPerSec).toFixed(2)}` : '; no etcd peer in this run';
  console.log(
    `creates/s bound with a server as cheap as bare node:https: ${cores} cores / (bare server ${bareServer.toFixed(3)} + create PostgreSQL ${postgres.toFixed(3)} + create client ${client.toFixed(3)} ms) = ${bound.toFixed(0)}/s${vsEtcd} (Plinth's server ${server.toFixed(3)} ms per create = ${(server / Math.max(1e-9, bareServer)).toFixed(1)}x the bare server's)`,
  );
}

/**
 * The server's CPU per create split three ways (ms): what a bare `node:https` server spends on the same
 * POST, what the rest of a dry-run create adds (framework, decoding, admission, managedFields,
 * validation, the answer), and what storing adds (the batcher, the pg client, the change feed).
 */
function printCreateSplit(create: number, dryRun: number, bare: number): void {
  console.log(
    `server CPU per create split: transport (bare node:https) ${bare.toFixed(3)} + API work before storage (dryRun=All − bare) ${(dryRun - bare).toFixed(3)} + storage (create − dryRun=All) ${(create - dryRun).toFixed(3)} = ${create.toFixed(3)} ms`,
  );
}

/** `ms` of CPU spread over `n` operations (0 operations count as 1). */
function msPer(ms: number, n: number): number {
  return ms / Math.max(1, n);
}

/** Server CPU per operation of each API phase (from /proc: the server process and its threads). */
function printServerCpu(rows: [string, CpuSplit, number][]): void {
  console.log('\nserver CPU per request, ms (from /proc, whole server process; PostgreSQL separately):');
  for (const [name, cpu, n] of rows) {
    console.log(`  ${name.padEnd(34)} server ${msPer(cpu.server, n).toFixed(3)}  PostgreSQL ${msPer(cpu.postgres, n).toFixed(3)}  (${n} requests)`);
  }
}

async function main(): Promise<void> {
  const pgPort = 57500 + (process.pid % 400);
  const apiPort = 18500 + (process.pid % 400);
  const etcdPort = 22500 + 2 * (process.pid % 400);
  const db = await startBenchPostgres('write', pgPort, pgStatementsFlags());
  const server = await startServerProcess({ DATABASE_URL: db.url, PLINTH_DB_POOL_SIZE: '32' }, apiPort);
  const base = `https://127.0.0.1:${apiPort}`;
  const agent = await benchAgent({ connections: CONCURRENCY, pipelining: 1, keepAliveTimeout: 30000 });
  // A token-only client: trusts the CA but presents no certificate, so the bearer token authenticates.
  const tokenAgent = new Agent({ connections: CONCURRENCY, pipelining: 1, keepAliveTimeout: 30000, connect: { ca: (await benchTls()).ca } });
  let token = '';
  const callWith: Call = async (dispatcher, auth, reset, method, path, body) => {
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
    // A second of creates first, so that the measured run finds the server's code compiled and its pools open.
    await runLoad(CONCURRENCY, 1000, async (i) => void (await call('POST', '/api/v1/namespaces/bench/configmaps', configMap(`warm-${i}`))));
    progress(`HTTP creates: ${CONCURRENCY} keep-alive clients for ${SECONDS}s`);
    const beforeCertText = await call('GET', '/metrics');
    const pids = { serverPid: server.pid!, postgresPid: postmasterPid(benchDataDir(db)) };
    await resetStatements(db.url);
    const { result: creates, cpu: createsCpu } = await cpuDuring(pids, () =>
      runLoad(CONCURRENCY, SECONDS * 1000, async (i) => void (await call('POST', '/api/v1/namespaces/bench/configmaps', configMap(`cm-${i}`)))),
    );
    const createStatements = await topStatements(db.url, creates.latencies.length);
    const afterCertText = await call('GET', '/metrics');
    const certAuth = authMeans(authTotals(beforeCertText), authTotals(afterCertText));
    const batches = batchDistribution(beforeCertText, afterCertText);
    // The peer runs right after Plinth's creates, on the same machine and load, so the two rates are comparable.
    const etcd = await etcdPhase(etcdPort);
    // The transport alone, with the same client and body: what the server's side of a create costs at the least.
    const bare = await bareHttpsPosts(agent, CONCURRENCY, SECONDS * 1000, (i) => configMap(`bare-${i}`));
    // The same creates with dryRun=All: admission, managedFields, defaults and validation run, storage does not.
    progress(`HTTP creates with dryRun=All for ${SECONDS / 2}s`);
    const { result: dryRuns, cpu: dryRunsCpu } = await cpuDuring(pids, () =>
      runLoad(CONCURRENCY, (SECONDS * 1000) / 2, async (i) => void (await call('POST', '/api/v1/namespaces/bench/configmaps?dryRun=All', configMap(`dry-${i}`)))),
    );
    const auth = QUICK ? undefined : await authPhases(callWith, agent, tokenAgent, (t) => (token = t));
    const spread = TENANTS > 1 ? await tenantsPhase(call, pids) : undefined;
    progress(`HTTP gets for ${SECONDS / 2}s`);
    await resetStatements(db.url);
    const { result: gets, cpu: getsCpu } = await cpuDuring(pids, () =>
      runLoad(CONCURRENCY, (SECONDS * 1000) / 2, async (i) => void (await call('GET', `/api/v1/namespaces/bench/configmaps/cm-${i % 1000}`))),
    );
    const getStatements = await topStatements(db.url, gets.latencies.length);
    await call('POST', '/api/v1/namespaces', JSON.stringify({ metadata: { name: 'list100' } }));
    for (let i = 0; i < 100; i++) {
      await call('POST', '/api/v1/namespaces/list100/configmaps', configMap(`l-${i}`).replace('"bench"', '"list100"'));
    }
    progress(`HTTP lists of 100 objects for ${SECONDS / 2}s`);
    const { result: lists, cpu: listsCpu } = await cpuDuring(pids, () => runLoad(8, (SECONDS * 1000) / 2, async () => void (await call('GET', '/api/v1/namespaces/list100/configmaps'))));
    const raw = QUICK ? undefined : (progress(`raw PostgreSQL ceiling: namespace lookup + plinth_create() + plinth_flush() by ${CONCURRENCY} pg clients for ${SECONDS}s`), await rawCeiling(db.url, true));
    const rawWrite = QUICK ? undefined : (progress(`raw PostgreSQL: plinth_create() + plinth_flush() for ${SECONDS}s`), await rawCeiling(db.url, false));
    progress(`raw PostgreSQL: durable single-row INSERT (bigserial key) by ${CONCURRENCY} pg clients for ${SECONDS}s`);
    const { result: insert, cpu: insertCpu } = await cpuDuring({ postgresPid: pids.postgresPid }, () => rawInsert(db.url));
    const storage = QUICK ? undefined : await storagePhases(db.url, pids.postgresPid);
    const c = percentiles(creates.latencies);
    const g = percentiles(gets.latencies);
    const l = percentiles(lists.latencies);
    const rows: [string, number, number, number, number][] = [
      ['API create (1 KiB configmap, 32 clients)', creates.opsPerSec, c.p50, c.p99, creates.errors],
      ['API get', gets.opsPerSec, g.p50, g.p99, gets.errors],
      ['API list (100 objects, 8 clients)', lists.opsPerSec, l.p50, l.p99, lists.errors],
    ];
    const loadRow = (name: string, r: { opsPerSec: number; latencies: number[]; errors: number }) => {
      const p = percentiles(r.latencies);
      rows.push([name, r.opsPerSec, p.p50, p.p99, r.errors]);
    };
    if (etcd) loadRow('etcd 3.4 put, JSON gateway (32 clients)', etcd.run);
    loadRow('API create, dryRun=All (no storage)', dryRuns);
    loadRow('bare node:https POST echo, no DB', bare.result);
    if (spread) loadRow(`API create over ${TENANTS} tenants`, spread.result);
    if (auth) {
      loadRow('API create, SA token, kept-alive', auth.tokenCreates);
      loadRow('API create, client cert, new TLS each', auth.certPerConn);
      loadRow('API create, SA token, new TLS each', auth.tokenPerConn);
    }
    if (raw && rawWrite) {
      rows.push(['raw PG: same statements as a create', raw.opsPerSec, raw.p50, raw.p99, 0]);
      rows.push(['raw PG: write + barrier, no lookup', rawWrite.opsPerSec, rawWrite.p50, rawWrite.p99, 0]);
    }
    rows.push(['raw PG: durable single-row INSERT', insert.opsPerSec, insert.p50, insert.p99, 0]);
    if (storage) {
      rows.push(['storage create, batched', storage.batched.opsPerSec, storage.batched.p50, storage.batched.p99, 0]);
      rows.push(['storage create, unbatched', storage.unbatched.opsPerSec, storage.unbatched.p50, storage.unbatched.p99, 0]);
    }
    console.log(`\nwrite benchmark (this machine, ${cpus().length} cores, durable PostgreSQL; load average ${loadavg().map((x) => x.toFixed(2)).join(' ')})\n`);
    console.log('operation                                   ops/s     p50 ms   p99 ms   errors');
    for (const [name, ops, p50, p99, errs] of rows) {
      console.log(`${name.padEnd(42)} ${ops.toFixed(0).padStart(7)}  ${p50.toFixed(2).padStart(7)}  ${p99.toFixed(2).padStart(7)}   ${errs}`);
    }
    console.log(`\nHTTPS + HTTP/1.1 keep-alive; client certificate (default): identity read once per connection.`);
    if (etcd) {
      console.log(`Plinth creates / etcd durable puts = ${(creates.opsPerSec / etcd.run.opsPerSec).toFixed(2)} (${creates.opsPerSec.toFixed(0)}/s vs ${etcd.run.opsPerSec.toFixed(0)}/s, ${CONCURRENCY} HTTPS clients each, 1 KiB values; goal >= 1.00, p99 create ${c.p99.toFixed(1)} ms, goal <= 50 ms)`);
      console.log(`etcd CPU per put ${msPer(etcd.cpu.server, etcd.run.latencies.length).toFixed(3)} ms; Plinth server CPU per create ${msPer(createsCpu.server, creates.latencies.length).toFixed(3)} ms + PostgreSQL ${msPer(createsCpu.postgres, creates.latencies.length).toFixed(3)} ms`);
    } else {
      console.log('etcd peer skipped: no `etcd` on the PATH');
    }
    printServerCpu([
      ['create (client certificate)', createsCpu, creates.latencies.length],
      ['create, dryRun=All (no storage)', dryRunsCpu, dryRuns.latencies.length],
      ['get', getsCpu, gets.latencies.length],
      ['list page (100 objects)', listsCpu, lists.latencies.length],
      ...(spread ? [[`create over ${TENANTS} tenants`, spread.cpu, spread.result.latencies.length] as [string, CpuSplit, number]] : []),
    ]);
    printStatements('create', createStatements);
    printStatements('get', getStatements);
    if (auth) printAuth(certAuth, auth, creates);
    console.log(`\nbatches during the client-certificate creates: ${batches}`);
    console.log(`API creates / raw PostgreSQL durable single-row inserts = ${((creates.opsPerSec / insert.opsPerSec) * 100).toFixed(1)}% (${creates.opsPerSec.toFixed(0)}/s vs ${insert.opsPerSec.toFixed(0)}/s, ${CONCURRENCY} clients each)`);
    if (storage) {
      console.log(`storage-layer creates / raw durable single-row inserts: batched ${((storage.batched.opsPerSec / insert.opsPerSec) * 100).toFixed(1)}% (mean ${storage.batched.meanBatch.toFixed(1)} writes/batch), unbatched ${((storage.unbatched.opsPerSec / insert.opsPerSec) * 100).toFixed(1)}%`);
    }
    printCpuBudget([
      ['API create (client certificate)', createsCpu, creates.latencies.length],
      ['API get (the HTTPS floor)', getsCpu, gets.latencies.length],
      ['bare node:https POST echo, no DB', bare.cpu, bare.result.latencies.length],
      ...(storage ? [['storage-layer create, batched', storage.batchedCpu, storage.batched.opsPerSec * SECONDS] as [string, CpuSplit, number]] : []),
      ['raw durable single-row INSERT', insertCpu, insert.opsPerSec * SECONDS],
    ], insert.opsPerSec);
    printTransportBound(createsCpu, creates.latencies.length, bare, etcd?.run.opsPerSec);
    printCreateSplit(msPer(createsCpu.server, creates.latencies.length), msPer(dryRunsCpu.server, dryRuns.latencies.length), msPer(bare.cpu.server, bare.result.latencies.length));
    if (raw) console.log(`API creates / raw statements of a create = ${((creates.opsPerSec / raw.opsPerSec) * 100).toFixed(1)}%`);
    printCodecFigures(VALUE, 100);
  } finally {
    await agent.close();
    await tokenAgent.close();
    await stopServerAndDatabase(server, db);
  }
}

/**
 * Creates tenants t0…t<TENANTS-1> (waiting until each serves its namespace
 * `default`), then the same create load as the main phase, op i going to
 * tenant i mod TENANTS.
 */
async function tenantsPhase(call: (method: 'GET' | 'POST', path: string, body?: string) => Promise<string>, pids: { serverPid: number; postgresPid: number }) {
  progress(`creating ${TENANTS} tenants`);
  for (let t = 0; t < TENANTS; t++) {
    await call('POST', '/apis/tenancy.plinth.dev/v1beta1/tenants', JSON.stringify({ apiVersion: 'tenancy.plinth.dev/v1beta1', kind: 'Tenant', metadata: { name: `t${t}` }, spec: {} }));
  }
  for (let t = 0; t < TENANTS; t++) {
    for (let attempt = 0; ; attempt++) {
      try {
        await call('GET', `/clusters/t${t}/api/v1/namespaces/default/configmaps?limit=1`);
        break;
      } catch (err) {
        if (attempt > 100) throw err;
        await new Promise((r) => setTimeout(r, 200));
      }
    }
  }
  const body = (name: string) => configMap(name).replace('"bench"', '"default"');
  await runLoad(CONCURRENCY, 1000, async (i) => void (await call('POST', `/clusters/t${i % TENANTS}/api/v1/namespaces/default/configmaps`, body(`warm-${i}`))));
  progress(`HTTP creates over ${TENANTS} tenants: ${CONCURRENCY} keep-alive clients for ${SECONDS}s`);
  return cpuDuring(pids, () => runLoad(CONCURRENCY, SECONDS * 1000, async (i) => void (await call('POST', `/clusters/t${i % TENANTS}/api/v1/namespaces/default/configmaps`, body(`cm-${i}`)))));
}

/** The storage layer alone, batched then unbatched. */
async function storagePhases(url: string, postgresPid: number) {
  progress(`storage layer: batched creates by ${CONCURRENCY} callers for ${SECONDS}s`);
  const { result: batched, cpu: batchedCpu } = await cpuDuring({ postgresPid }, () => storageCreates(url, 'sb', {}));
  progress(`storage layer: unbatched creates (a transaction per write) by ${CONCURRENCY} callers for ${SECONDS}s`);
  const unbatched = await storageCreates(url, 'su', { maxBatch: 1, maxInFlight: CONCURRENCY });
  return { batched, batchedCpu, unbatched };
}

/** The authentication comparisons of {@link authPhases}. */
function printAuth(certAuth: { authnUs: number; authzUs: number }, auth: Awaited<ReturnType<typeof authPhases>>, creates: Load): void {
  const { tokenCreates, tokenAuth, certPerConn, tokenPerConn } = auth;
  console.log(`SA token vs client certificate creates/s = ${((tokenCreates.opsPerSec / creates.opsPerSec) * 100).toFixed(1)}% (token authentication: signature (cached) + ServiceAccount lookup per request)`);
  // The server's own histograms: time in authentication + authorization per request, against the mean create latency.
  const share = (a: { authnUs: number; authzUs: number }, meanMs: number) => (((a.authnUs + a.authzUs) / 1000 / meanMs) * 100).toFixed(2);
  const meanOf = (xs: number[]) => xs.reduce((x, y) => x + y, 0) / Math.max(1, xs.length);
  console.log(`auth cost per request (server histograms): client certificate (system:masters) authn ${certAuth.authnUs.toFixed(1)} µs + authz ${certAuth.authzUs.toFixed(1)} µs = ${share(certAuth, meanOf(creates.latencies))}% of a create; SA token + RBAC authn ${tokenAuth.authnUs.toFixed(1)} µs + authz ${tokenAuth.authzUs.toFixed(1)} µs = ${share(tokenAuth, meanOf(tokenCreates.latencies))}% of a create (goal <= 5%)`);
  console.log(`per-connection vs kept-alive creates/s: certificate ${((certPerConn.opsPerSec / creates.opsPerSec) * 100).toFixed(1)}%, token ${((tokenPerConn.opsPerSec / tokenCreates.opsPerSec) * 100).toFixed(1)}%`);
}

runBenchmark(CBOR_ONLY ? async () => printCodecFigures(VALUE, 100) : TRACING_ONLY ? () => tracingCost(SECONDS, configMap) : main);
