import { type Agent, request } from 'undici';
import pg from 'pg';
import { benchAgent, benchUserAgent, percentiles, progress, runBenchmark, runLoad, startBenchPostgres, startServerProcess, stopServerAndDatabase } from './bench-support.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const QUIET_CLIENTS = 4;
const FLOOD_CLIENTS = 64;
/** BENCH_HOSTILE=1: the flooding clients ignore Retry-After and retry at once. */
const HOSTILE = process.env.BENCH_HOSTILE === '1';

/** One HTTPS call; resolves with the status (any status: 429s are part of the measurement). */
async function call(base: string, dispatcher: Agent, method: 'GET' | 'POST', path: string, body?: unknown): Promise<number> {
  const res = await request(`${base}${path}`, { method, dispatcher, body: body === undefined ? undefined : JSON.stringify(body), headers: { 'content-type': 'application/json' } });
  await res.body.text();
  return res.statusCode;
}

/** B's workload: creates, and gets of an object that exists, alternating; each must succeed. */
function quietWorker(base: string, agent: Agent, tag: string): (i: number) => Promise<void> {
  return async (i) => {
    const name = `${tag}-${i}`;
    const status = i % 2 === 0 ? await call(base, agent, 'POST', '/clusters/b/api/v1/namespaces/default/configmaps', { metadata: { name } }) : await call(base, agent, 'GET', '/clusters/b/api/v1/namespaces/default/configmaps/seed');
    if (status >= 300) throw new Error(`quiet tenant got ${status}`);
  };
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

/**
 * Tenant B (4 clients of creates and gets) alone, then while tenant A floods
 * with 64 clients: B's p50/p99 in both phases, A's throughput and share of
 * 429s, and the cost of usage accounting on creates.
 */
async function main(): Promise<void> {
  const pgPort = 57900 + (process.pid % 400);
  const apiPort = 18900 + (process.pid % 400);
  const db = await startBenchPostgres('fairness', pgPort);
  const server = await startServerProcess({ DATABASE_URL: db.url, PLINTH_DB_POOL_SIZE: '32', PLINTH_TENANT_QUEUE_LENGTH: '16', PLINTH_MAX_REQUESTS_INFLIGHT: process.env.BENCH_MAX_INFLIGHT ?? '8' }, apiPort);
  const base = `https://127.0.0.1:${apiPort}`;
  const admin = await benchAgent({ connections: 4 });
  const alice = await benchUserAgent('alice', [], { connections: FLOOD_CLIENTS, pipelining: 1 });
  const bob = await benchUserAgent('bob', [], { connections: QUIET_CLIENTS, pipelining: 1 });
  try {
    for (const [name, owner, limits] of [['a', 'alice', { concurrentRequests: 8 }], ['b', 'bob', {}]] as const) {
      const status = await call(base, admin, 'POST', '/apis/tenancy.plinth.dev/v1beta1/tenants', { apiVersion: 'tenancy.plinth.dev/v1beta1', kind: 'Tenant', metadata: { name }, spec: { owners: [{ kind: 'User', name: owner }], limits } });
      if (status !== 201) throw new Error(`creating tenant ${name}: ${status}`);
    }
    if ((await call(base, bob, 'POST', '/clusters/b/api/v1/namespaces/default/configmaps', { metadata: { name: 'seed' } })) !== 201) throw new Error('seeding tenant B');
    progress(`tenant B alone: ${QUIET_CLIENTS} clients of creates and gets for ${SECONDS}s`);
    const quiet = await runLoad(QUIET_CLIENTS, SECONDS * 1000, quietWorker(base, bob, 'q'));
    progress(`tenant A floods with ${FLOOD_CLIENTS} clients (8 seats, queue 16; ${HOSTILE ? 'ignoring' : 'honouring'} Retry-After) while B runs again, ${SECONDS}s`);
    let floodOk = 0;
    let flood429 = 0;
    let floodOther = 0;
    const until = Date.now() + SECONDS * 1000;
    const flooding = Promise.all(
      Array.from({ length: FLOOD_CLIENTS }, async (_, c) => {
        for (let i = 0; Date.now() < until; i++) {
          const s = await call(base, alice, i % 2 === 0 ? 'POST' : 'GET', i % 2 === 0 ? '/clusters/a/api/v1/namespaces/default/configmaps' : '/clusters/a/api/v1/namespaces/default/configmaps?limit=50', i % 2 === 0 ? { metadata: { name: `f-${c}-${i}` } } : undefined).catch(() => 0);
          if (s === 429) {
            flood429++;
            // As client-go and kubectl do: wait Retry-After (1 s) before trying again.
            if (!HOSTILE) await new Promise((r) => setTimeout(r, 1000));
          }
          else if (s < 300 && s > 0) floodOk++;
          else floodOther++;
        }
      }),
    );
    const loud = await runLoad(QUIET_CLIENTS, SECONDS * 1000, quietWorker(base, bob, 'l'));
    await flooding;
    progress('usage accounting at the SQL level: plinth_create with and without it, 16 pg clients');
    const acct = await accountingCost(db.url);
    const q = percentiles(quiet.latencies);
    const l = percentiles(loud.latencies);
    console.log('\nfairness benchmark (one replica, embedded PostgreSQL)\n');
    console.log('phase                                   ops/s    p50 ms    p99 ms   errors');
    console.log(`B alone (4 clients)                   ${quiet.opsPerSec.toFixed(0).padStart(7)}  ${q.p50.toFixed(2).padStart(8)}  ${q.p99.toFixed(2).padStart(8)}   ${quiet.errors}`);
    console.log(`B while A floods (64 clients${HOSTILE ? ', hostile' : ''})${HOSTILE ? '' : '         '}${loud.opsPerSec.toFixed(0).padStart(7)}  ${l.p50.toFixed(2).padStart(8)}  ${l.p99.toFixed(2).padStart(8)}   ${loud.errors}`);
    const total = floodOk + flood429 + floodOther;
    console.log(`\nA: ${(floodOk / SECONDS).toFixed(0)} served/s, ${(flood429 / SECONDS).toFixed(0)} refused/s (429: ${((flood429 / Math.max(1, total)) * 100).toFixed(1)}% of its requests), ${floodOther} other errors`);
    console.log(`B's p99 under the flood / quiet = ${(l.p99 / q.p99).toFixed(2)}x (target <= 2x)`);
    // Where B's slow requests waited: for a seat (flow control's wait histogram), or elsewhere.
    const metrics = await (await request(`${base}/metrics`, { dispatcher: admin })).body.text();
    const waits = (le: string) =>
      Number(metrics.split('\n').find((line) => line.startsWith('plinth_flowcontrol_request_wait_duration_seconds_bucket{') && line.includes(`le="${le}"`) && line.includes('tenant="b"'))?.split(' ')[1] ?? NaN);
    const admitted = waits('+Inf');
    console.log(`B's requests that waited for a seat longer than 0.1 s: ${admitted - waits('0.1')}, longer than 1 s: ${admitted - waits('1')} (of ${admitted})`);
    console.log(`usage accounting: plinth_create ${acct.withAccounting.toFixed(0)}/s vs the same statements without it ${acct.without.toFixed(0)}/s = ${((1 - acct.withAccounting / acct.without) * 100).toFixed(1)}% cost (target <= 10%)`);
  } finally {
    await admin.close();
    await alice.close();
    await bob.close();
    await stopServerAndDatabase(server, db);
  }
}

runBenchmark(main);
