import { once } from 'node:events';
import { loadavg } from 'node:os';
import { Worker } from 'node:worker_threads';
import { Agent, request } from 'undici';
import pg from 'pg';
import { flood, type FloodCounts, type FloodOptions, manyLabels } from './fairness-flood.worker.js';
import { benchAgent, benchTls, percentiles, progress, runBenchmark, runLoad, startBenchPostgres, startServerProcess, stopServerAndDatabase } from './bench-support.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const QUIET_CLIENTS = 4;
const FLOOD_CLIENTS = Number(process.env.BENCH_FLOOD_CLIENTS ?? 64);
/** BENCH_FLOOD_LABELS=10000: A's creates carry that many labels each (label-heavy writes: cheap to send, costly to index). */
const FLOOD_LABELS = Number(process.env.BENCH_FLOOD_LABELS ?? 0);
/** BENCH_BIG_LABELS=100000: also times one create of a ConfigMap with that many labels by A, alone and at the start of A's flood. */
const BIG_LABELS = Number(process.env.BENCH_BIG_LABELS ?? 0);
/** BENCH_HOSTILE=1: the flooding clients ignore Retry-After and retry at once. */
const HOSTILE = process.env.BENCH_HOSTILE === '1';
/** BENCH_FLOOD_IN_PROCESS=1: A's flood runs on the benchmark's main thread beside B's clients (the old, flawed measurement). */
const IN_PROCESS = process.env.BENCH_FLOOD_IN_PROCESS === '1';
/** BENCH_FLOOD_ALONE=1: first a phase of A's flood alone, whose throughput shows what the settings cost a lone flooder. */
const FLOOD_ALONE = process.env.BENCH_FLOOD_ALONE === '1';

/** One HTTPS call; resolves with the status (any status: 429s are part of the measurement). */
async function call(base: string, dispatcher: Agent, method: 'GET' | 'POST', path: string, body?: unknown): Promise<number> {
  const res = await request(`${base}${path}`, { method, dispatcher, body: body === undefined ? undefined : JSON.stringify(body), headers: { 'content-type': 'application/json' } });
  await res.body.text();
  return res.statusCode;
}

/**
 * The cost of usage accounting at the SQL level: plinth_create (which counts
 * usage and checks limits in the write's transaction) against the same
 * statements without the accounting, each by 16 pg clients.
 */
async function accountingCost(url: string): Promise<{ withAccounting: number; without: number }> {
  const pool = new pg.Pool({ connectionString: url, max: 16 });
  const body = JSON.stringify({ metadata: { name: 'x', namespace: 'acct' }, data: { v: 'x'.repeat(900) } });
  const withAccounting = await runLoad(16, (SECONDS * 1000) / 2, async (i) => {
    await pool.query("SELECT plinth_create('b', 'configmaps', 'acct', $1, $2::jsonb)", [`a-${i}`, body]);
  });
  // The same function as migration 0003's plinth_create, minus plinth_account: created in this throw-away database only.
  await pool.query(`
    CREATE OR REPLACE FUNCTION bench_create_unaccounted(p_tenant text, p_resource text, p_namespace text, p_name text, p_body jsonb)
    RETURNS bigint LANGUAGE plpgsql AS $fn$
    DECLARE r bigint;
    BEGIN
      PERFORM set_config('synchronous_commit', 'off', true);
      r := plinth_next_revision();
      PERFORM plinth_check_tenant(p_tenant);
      INSERT INTO objects (tenant, resource, namespace, name, revision, body) VALUES (p_tenant, p_resource, p_namespace, p_name, r, p_body) ON CONFLICT DO NOTHING;
      INSERT INTO changes (revision, tenant, resource, namespace, name, type, object) VALUES (r, p_tenant, p_resource, p_namespace, p_name, 'A', p_body);
      PERFORM pg_notify('plinth_changes', r::text);
      RETURN r;
    END $fn$`);
  const without = await runLoad(16, (SECONDS * 1000) / 2, async (i) => {
    await pool.query("SELECT bench_create_unaccounted('b', 'configmaps', 'acct2', $1, $2::jsonb)", [`n-${i}`, body]);
  });
  await pool.end();
  return { withAccounting: withAccounting.opsPerSec, without: without.opsPerSec };
}

/** A tenant's ServiceAccount `bench` (RoleBinding to `edit` in `default`) and a token of it: how the issue measured, each tenant as its own ServiceAccount. */
async function tenantToken(base: string, admin: Agent, tenant: string): Promise<string> {
  const post = async (path: string, body: unknown) => {
    const res = await request(`${base}/clusters/${tenant}${path}`, { method: 'POST', dispatcher: admin, body: JSON.stringify(body), headers: { 'content-type': 'application/json' } });
    const text = await res.body.text();
    if (res.statusCode >= 300) throw new Error(`POST ${path} in ${tenant}: ${res.statusCode} ${text}`);
    return JSON.parse(text) as { status?: { token?: string } };
  };
  await post('/api/v1/namespaces/default/serviceaccounts', { metadata: { name: 'bench' } });
  await post('/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings', {
    metadata: { name: 'bench-edit' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'edit' },
    subjects: [{ kind: 'ServiceAccount', name: 'bench', namespace: 'default' }],
  });
  return String((await post('/api/v1/namespaces/default/serviceaccounts/bench/token', { spec: {} })).status?.token);
}

/** A token-only client (trusts the CA, presents no certificate) with `connections` keep-alive connections. */
async function tokenAgent(connections: number): Promise<Agent> {
  return new Agent({ connections, pipelining: 1, keepAliveTimeout: 30000, connect: { ca: (await benchTls()).ca } });
}

/** One HTTPS call with a bearer token; resolves with the status (429s are part of the measurement). */
async function callAs(base: string, dispatcher: Agent, token: string, method: 'GET' | 'POST', path: string, body?: unknown): Promise<number> {
  const res = await request(`${base}${path}`, { method, dispatcher, body: body === undefined ? undefined : JSON.stringify(body), headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` } });
  await res.body.text();
  return res.statusCode;
}

/** B's latencies (ms) by verb, beside runLoad's overall ones: which of its requests the flood delays. */
interface ByVerb {
  create: number[];
  get: number[];
}

/** B's workload: creates, and gets of an object that exists, alternating; each must succeed; each latency also goes to `byVerb`. */
function quietWorker(base: string, agent: Agent, token: string, tag: string, byVerb: ByVerb): (i: number) => Promise<void> {
  return async (i) => {
    const t0 = performance.now();
    const create = i % 2 === 0;
    const status = create ? await callAs(base, agent, token, 'POST', '/clusters/b/api/v1/namespaces/default/configmaps', { metadata: { name: `${tag}-${i}` } }) : await callAs(base, agent, token, 'GET', '/clusters/b/api/v1/namespaces/default/configmaps/seed');
    if (status >= 300) throw new Error(`quiet tenant got ${status}`);
    (create ? byVerb.create : byVerb.get).push(performance.now() - t0);
  };
}

/**
 * Tenant A's flood until `until` (ms since the epoch), in a worker thread
 * of its own (its own event loop and agent, as a separate client), or on
 * this thread beside B's clients when BENCH_FLOOD_IN_PROCESS=1 (how the
 * benchmark measured before: A's 64 TLS clients then delay B's on the same
 * loop, and that client-side delay is counted in B's latency).
 */
async function startFlood(base: string, token: string, until: number, tag: string): Promise<FloodCounts> {
  const options: FloodOptions = { base, ca: (await benchTls()).ca, token, clients: FLOOD_CLIENTS, until, hostile: HOSTILE, tag, labels: FLOOD_LABELS };
  if (IN_PROCESS) return flood(options);
  const worker = new Worker(new URL('./fairness-flood.worker.js', import.meta.url), { workerData: options });
  try {
    const [counts] = (await Promise.race([once(worker, 'message'), once(worker, 'error').then(([err]) => Promise.reject(err))])) as [FloodCounts];
    return counts;
  } finally {
    await worker.terminate();
  }
}

/** The value of the first sample of `name` (with `labels` in its label set) in a Prometheus text exposition; NaN when absent. */
function sample(metrics: string, name: string, labels = ''): number {
  const line = metrics.split('\n').find((l) => (l.startsWith(`${name}{`) || l.startsWith(`${name} `)) && l.includes(labels));
  return Number(line?.split(' ').at(-1) ?? NaN);
}

/** What the replica reported of its event loop over one phase: means of the limit, the loop's delay (ms) and its utilization. */
interface LoopSeen {
  limit: number;
  delayMs: number;
  utilization: number;
}

/** Polls the adaptive limit, the loop delay and utilization from /metrics every 250 ms until the returned function is called; resolves with their means. */
function pollLoop(base: string, admin: Agent): () => Promise<LoopSeen> {
  const limits: number[] = [];
  const delays: number[] = [];
  const busy: number[] = [];
  let stopped = false;
  const polling = (async () => {
    while (!stopped) {
      const text = await (await request(`${base}/metrics`, { dispatcher: admin })).body.text();
      limits.push(sample(text, 'plinth_flowcontrol_adaptive_limit'));
      delays.push(sample(text, 'plinth_flowcontrol_event_loop_delay_seconds') * 1000);
      busy.push(sample(text, 'plinth_flowcontrol_event_loop_utilization'));
      await new Promise((r) => setTimeout(r, 250));
    }
  })();
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
  return async () => {
    stopped = true;
    await polling;
    return { limit: mean(limits), delayMs: mean(delays), utilization: mean(busy) };
  };
}

interface Phase {
  quietAlone: { opsPerSec: number; p50: number; p99: number; errors: number };
  quietFlood: { opsPerSec: number; p50: number; p99: number; errors: number };
  /** B's p99 (ms) of creates and of gets, alone and under the flood. */
  verbP99: { aloneCreate: number; aloneGet: number; floodCreate: number; floodGet: number };
  floodOk: number;
  flood429: number;
  floodOther: number;
  /** A's answers served per second while it floods alone (BENCH_FLOOD_ALONE=1 only). */
  floodAlone?: number;
  /** B's admissions, and those that waited for a seat longer than 0.1 s. */
  bAdmitted: number;
  bWaitedOver100ms: number;
  /** The replica-wide limit and the event loop's mean delay, averaged over each phase (polled from /metrics). */
  loopAlone: LoopSeen;
  loopFlood: LoopSeen;
  /** One create of BIG_LABELS labels by A: ms alone, and sent as A's flood starts (BENCH_BIG_LABELS only). */
  big?: { aloneMs: number; floodMs: number };
  /** plinth_create/s with and without usage accounting (measured in one configuration only). */
  accounting?: { withAccounting: number; without: number };
}

/**
 * One server with `env` on top of the defaults: tenant B (4 clients of
 * creates and gets, its own ServiceAccount token) alone, then while tenant
 * A (its own ServiceAccount) floods with 64 clients of plain creates and
 * gets.
 */
async function measure(label: string, env: Record<string, string>, pgPort: number, apiPort: number, withAccounting: boolean): Promise<Phase> {
  const db = await startBenchPostgres(`fairness-${label}`, pgPort);
  const server = await startServerProcess({ DATABASE_URL: db.url, ...env }, apiPort);
  const base = `https://127.0.0.1:${apiPort}`;
  const admin = await benchAgent({ connections: 4 });
  const alice = await tokenAgent(1);
  const bob = await tokenAgent(QUIET_CLIENTS);
  try {
    for (const [name, owner] of [['a', 'alice'], ['b', 'bob']] as const) {
      const status = await call(base, admin, 'POST', '/apis/tenancy.plinth.dev/v1beta1/tenants', { apiVersion: 'tenancy.plinth.dev/v1beta1', kind: 'Tenant', metadata: { name }, spec: { owners: [{ kind: 'User', name: owner }] } });
      if (status !== 201) throw new Error(`creating tenant ${name}: ${status}`);
    }
    const tokenA = await tenantToken(base, admin, 'a');
    const tokenB = await tenantToken(base, admin, 'b');
    if ((await callAs(base, bob, tokenB, 'POST', '/clusters/b/api/v1/namespaces/default/configmaps', { metadata: { name: 'seed' } })) !== 201) throw new Error('seeding tenant B');
    if ((await callAs(base, alice, tokenA, 'POST', '/clusters/a/api/v1/namespaces/default/configmaps', { metadata: { name: 'seed' } })) !== 201) throw new Error('seeding tenant A');
    let floodAlone: number | undefined;
    if (FLOOD_ALONE) {
      progress(`[${label}] tenant A floods alone for ${SECONDS}s (what the settings cost a lone flooder)`);
      floodAlone = (await startFlood(base, tokenA, Date.now() + SECONDS * 1000, 'fa')).ok / SECONDS;
    }
    const bigCreate = async (name: string) => {
      const t0 = performance.now();
      const status = await callAs(base, alice, tokenA, 'POST', '/clusters/a/api/v1/namespaces/default/configmaps', { metadata: { name, labels: manyLabels(BIG_LABELS) } });
      if (status !== 201) throw new Error(`the ${BIG_LABELS}-label create got ${status}`);
      return performance.now() - t0;
    };
    let bigAlone: number | undefined;
    if (BIG_LABELS > 0) {
      progress(`[${label}] one create of ${BIG_LABELS} labels by A, alone`);
      bigAlone = await bigCreate('big-alone');
    }
    progress(`[${label}] tenant B alone: ${QUIET_CLIENTS} clients of creates and gets for ${SECONDS}s`);
    const stopAlone = pollLoop(base, admin);
    const aloneByVerb: ByVerb = { create: [], get: [] };
    const quiet = await runLoad(QUIET_CLIENTS, SECONDS * 1000, quietWorker(base, bob, tokenB, 'q', aloneByVerb));
    const loopAlone = await stopAlone();
    progress(`[${label}] tenant A floods with ${FLOOD_CLIENTS} clients of creates and gets (${HOSTILE ? 'ignoring' : 'honouring'} Retry-After) while B runs again, ${SECONDS}s`);
    const before = await (await request(`${base}/metrics`, { dispatcher: admin })).body.text();
    const flooding = startFlood(base, tokenA, Date.now() + SECONDS * 1000, 'f');
    // Sent once the flood has had a second to start.
    const bigUnderFlood = BIG_LABELS > 0 ? new Promise((r) => setTimeout(r, 1000)).then(() => bigCreate('big-flood')) : undefined;
    const stopFlood = pollLoop(base, admin);
    const floodByVerb: ByVerb = { create: [], get: [] };
    const loud = await runLoad(QUIET_CLIENTS, SECONDS * 1000, quietWorker(base, bob, tokenB, 'l', floodByVerb));
    const loopFlood = await stopFlood();
    const after = await (await request(`${base}/metrics`, { dispatcher: admin })).body.text();
    const { ok: floodOk, refused: flood429, other: floodOther } = await flooding;
    const bigFlood = await bigUnderFlood;
    const waits = (text: string, le: string) => sample(text, 'plinth_flowcontrol_request_wait_duration_seconds_bucket', `le="${le}",tenant="b"`) || sample(text, 'plinth_flowcontrol_request_wait_duration_seconds_bucket', `tenant="b",le="${le}"`);
    const admitted = waits(after, '+Inf') - waits(before, '+Inf');
    const q = percentiles(quiet.latencies);
    const l = percentiles(loud.latencies);
    if (withAccounting) progress('usage accounting at the SQL level: plinth_create with and without it, 16 pg clients');
    const accounting = withAccounting ? await accountingCost(db.url) : undefined;
    return {
      accounting,
      big: bigAlone !== undefined && bigFlood !== undefined ? { aloneMs: bigAlone, floodMs: bigFlood } : undefined,
      quietAlone: { opsPerSec: quiet.opsPerSec, p50: q.p50, p99: q.p99, errors: quiet.errors },
      quietFlood: { opsPerSec: loud.opsPerSec, p50: l.p50, p99: l.p99, errors: loud.errors },
      verbP99: { aloneCreate: percentiles(aloneByVerb.create).p99, aloneGet: percentiles(aloneByVerb.get).p99, floodCreate: percentiles(floodByVerb.create).p99, floodGet: percentiles(floodByVerb.get).p99 },
      floodOk,
      flood429,
      floodOther,
      floodAlone,
      bAdmitted: admitted,
      bWaitedOver100ms: admitted - (waits(after, '0.1') - waits(before, '0.1')),
      loopAlone,
      loopFlood,
    };
  } finally {
    await admin.close();
    await alice.close();
    await bob.close();
    await stopServerAndDatabase(server, db);
  }
}

/** The settings compared back to back: BENCH_CONFIGS=`name:VAR=v,VAR=v;name:…` overrides the default pair (adaptive off, adaptive on). */
function configs(): [string, Record<string, string>][] {
  const spec = process.env.BENCH_CONFIGS ?? 'adaptive-off:PLINTH_ADAPTIVE_CONCURRENCY=off;adaptive-on:PLINTH_ADAPTIVE_CONCURRENCY=on';
  return spec.split(';').map((c) => {
    const [name, vars = ''] = c.split(':');
    return [name, Object.fromEntries(vars.split(',').filter((v) => v.includes('=')).map((v) => v.split('=') as [string, string]))];
  });
}

/**
 * Issue 29 goal 5 on the default settings: tenant B's p99 alone and under
 * tenant A's plain flood, the ratio, both tenants' throughput and A's 429s,
 * for each configuration back to back (by default adaptive concurrency off,
 * then on), then the cost of usage accounting on creates.
 */
async function main(): Promise<void> {
  const pgPort = 57900 + (process.pid % 400);
  const apiPort = 18900 + (process.pid % 400);
  const [load1] = loadavg();
  const results: [string, Phase][] = [];
  const all = configs();
  // The accounting cost is measured once, in the last configuration's database (tenant B exists there); BENCH_ACCOUNTING=0 skips it.
  for (const [i, [name, env]] of all.entries()) results.push([name, await measure(name, env, pgPort, apiPort, i === all.length - 1 && process.env.BENCH_ACCOUNTING !== '0')]);
  const [load2] = loadavg();
  console.log(`\nfairness benchmark (one replica, embedded PostgreSQL, default flow-control settings, ${SECONDS}s phases, A: ${FLOOD_CLIENTS} clients${FLOOD_LABELS ? ` creating ConfigMaps of ${FLOOD_LABELS} labels` : ''}, A's flood ${IN_PROCESS ? 'on the same thread as B (BENCH_FLOOD_IN_PROCESS=1)' : 'in its own worker thread'}; load average ${load1.toFixed(2)} -> ${load2.toFixed(2)})\n`);
  console.log('config            B alone ops/s p50/p99 ms    B under flood ops/s p50/p99 ms   p99 ratio   A served/s  A 429/s  A other  B waited>0.1s  limit alone/flood  loop delay ms alone/flood  loop busy alone/flood');
  for (const [name, r] of results) {
    const a = r.quietAlone;
    const f = r.quietFlood;
    console.log(
      `${name.padEnd(16)} ${a.opsPerSec.toFixed(0).padStart(6)} ${a.p50.toFixed(1).padStart(7)}/${a.p99.toFixed(1).padEnd(7)}   ${f.opsPerSec.toFixed(0).padStart(6)} ${f.p50.toFixed(1).padStart(7)}/${f.p99.toFixed(1).padEnd(7)}   ${(f.p99 / a.p99).toFixed(2).padStart(6)}x   ${(r.floodOk / SECONDS).toFixed(0).padStart(8)}  ${(r.flood429 / SECONDS).toFixed(0).padStart(7)}  ${String(r.floodOther).padStart(7)}  ${`${r.bWaitedOver100ms}/${r.bAdmitted}`.padStart(12)}  ${`${r.loopAlone.limit.toFixed(0)}/${r.loopFlood.limit.toFixed(1)}`.padStart(17)}  ${`${r.loopAlone.delayMs.toFixed(1)}/${r.loopFlood.delayMs.toFixed(1)}`.padStart(24)}  ${`${(r.loopAlone.utilization * 100).toFixed(0)}%/${(r.loopFlood.utilization * 100).toFixed(0)}%`.padStart(20)}`,
    );
    const v = r.verbP99;
    console.log(`  B p99 by verb: creates ${v.aloneCreate.toFixed(1)} -> ${v.floodCreate.toFixed(1)} ms, gets ${v.aloneGet.toFixed(1)} -> ${v.floodGet.toFixed(1)} ms (alone -> under the flood)`);
    if (r.floodAlone !== undefined) console.log(`  A alone: ${r.floodAlone.toFixed(0)} served/s`);
    if (r.big) console.log(`  one create of ${BIG_LABELS} labels by A: ${r.big.aloneMs.toFixed(0)} ms alone, ${r.big.floodMs.toFixed(0)} ms sent 1 s into A's flood`);
    if (a.errors + f.errors > 0) console.log(`  B errors: ${a.errors} alone, ${f.errors} under the flood`);
  }
  console.log('target: B p99 under the flood <= 2x alone; A served at least its fair share (B ops/s under the flood + A served/s split evenly, or all B left)');
  const acct = results.at(-1)?.[1].accounting;
  if (acct) console.log(`usage accounting: plinth_create ${acct.withAccounting.toFixed(0)}/s vs the same statements without it ${acct.without.toFixed(0)}/s = ${((1 - acct.withAccounting / acct.without) * 100).toFixed(1)}% cost (target <= 10%)`);
}

runBenchmark(main);
