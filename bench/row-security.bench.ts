import { type Agent, request } from 'undici';
import pg from 'pg';
import { benchAgent, percentiles, progress, runBenchmark, runLoad, startBenchPostgres, startServerProcess } from './bench-support.js';

const TENANTS = Number(process.env.BENCH_TENANTS ?? 4);
const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 32);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 1);
/** Objects per tenant that the list and get phases read (10 of them carry the selected label). */
const OBJECTS = 2000;
const PAYLOAD = 'x'.repeat(1024);

async function call(base: string, agent: Agent, method: 'GET' | 'POST', path: string, body?: unknown): Promise<number> {
  const res = await request(`${base}${path}`, { method, dispatcher: agent, body: body === undefined ? undefined : JSON.stringify(body), headers: { 'content-type': 'application/json' } });
  await res.body.dump();
  return res.statusCode;
}

function expect(status: number, want: number, what: string): void {
  if (status !== want) throw new Error(`${what}: HTTP ${status}`);
}

/** Tenants bench-0 … bench-(n-1), each with OBJECTS ConfigMaps of 1 KiB in `default` (10 labelled `pick=yes`). */
async function seed(base: string, agent: Agent): Promise<void> {
  for (let t = 0; t < TENANTS; t++) {
    const name = `bench-${t}`;
    const status = await call(base, agent, 'POST', '/apis/tenancy.plinth.dev/v1beta1/tenants', { apiVersion: 'tenancy.plinth.dev/v1beta1', kind: 'Tenant', metadata: { name }, spec: { owners: [{ kind: 'User', name: 'bench' }] } });
    if (status !== 201 && status !== 409) throw new Error(`creating tenant ${name}: HTTP ${status}`);
    for (let i = 0; (await call(base, agent, 'GET', `/clusters/${name}/api/v1/namespaces/default`)) !== 200; i++) {
      if (i > 300) throw new Error(`tenant ${name} was not provisioned`);
      await new Promise((r) => setTimeout(r, 100));
    }
    progress(`seeding ${OBJECTS} objects in ${name}`);
    let next = 0;
    const lane = async () => {
      for (let i = next++; i < OBJECTS; i = next++) {
        const labels = i < 10 ? { pick: 'yes' } : { pick: 'no' };
        const status = await call(base, agent, 'POST', `/clusters/${name}/api/v1/namespaces/default/configmaps`, { metadata: { name: `seed-${i}`, labels }, data: { v: PAYLOAD } });
        if (status !== 201 && status !== 409) throw new Error(`seed: HTTP ${status}`);
      }
    };
    await Promise.all(Array.from({ length: 16 }, lane));
  }
}

interface Figures {
  creates: ReturnType<typeof measureOf>;
  gets: ReturnType<typeof measureOf>;
  lists: ReturnType<typeof measureOf>;
  selected: ReturnType<typeof measureOf>;
}

function measureOf(r: { latencies: number[]; opsPerSec: number; errors: number }) {
  return { perSec: r.opsPerSec, ...percentiles(r.latencies), errors: r.errors };
}

/** The four loads of one server, each tenant taking turns per request (so pooled connections change hands). */
async function measure(base: string, agent: Agent, mode: string): Promise<Figures> {
  const tenant = (i: number) => `/clusters/bench-${i % TENANTS}/api/v1/namespaces/default/configmaps`;
  progress(`${mode}: creates`);
  const creates = await runLoad(CLIENTS, SECONDS * 1000, async (i) => expect(await call(base, agent, 'POST', tenant(i), { metadata: { name: `${mode}-${Date.now()}-${i}` }, data: { v: PAYLOAD } }), 201, 'create'));
  progress(`${mode}: gets`);
  const gets = await runLoad(CLIENTS, SECONDS * 1000, async (i) => expect(await call(base, agent, 'GET', `${tenant(i)}/seed-${(i * 7919) % OBJECTS}`), 200, 'get'));
  progress(`${mode}: list pages of 100`);
  const lists = await runLoad(CLIENTS, SECONDS * 1000, async (i) => expect(await call(base, agent, 'GET', `${tenant(i)}?limit=100`), 200, 'list'));
  progress(`${mode}: label-selected lists (10 of ${OBJECTS})`);
  const selected = await runLoad(CLIENTS, SECONDS * 1000, async (i) => expect(await call(base, agent, 'GET', `${tenant(i)}?labelSelector=pick%3Dyes`), 200, 'selected list'));
  return { creates: measureOf(creates), gets: measureOf(gets), lists: measureOf(lists), selected: measureOf(selected) };
}

/** Raw PostgreSQL: point reads by key as the owner, and as the request role under the policy (one connection each). */
async function rawReads(url: string): Promise<{ owner: number; policy: number }> {
  const time = async (asRequest: boolean) => {
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    try {
      if (asRequest) await c.query(`SELECT set_config('role', 'plinth_request', false), set_config('plinth.tenant', 'bench-0', false)`);
      const n = 5000;
      const t0 = process.hrtime.bigint();
      for (let i = 0; i < n; i++) await c.query('SELECT body FROM objects WHERE tenant = $1 AND resource = $2 AND namespace = $3 AND name = $4', ['bench-0', 'configmaps', 'default', `seed-${i % OBJECTS}`]);
      return n / (Number(process.hrtime.bigint() - t0) / 1e9);
    } finally {
      await c.end();
    }
  };
  return { owner: await time(false), policy: await time(true) };
}

const row = (what: string, off: ReturnType<typeof measureOf>, on: ReturnType<typeof measureOf>) =>
  `| ${what} | ${off.perSec.toFixed(0)} (p99 ${off.p99.toFixed(1)} ms) | ${on.perSec.toFixed(0)} (p99 ${on.p99.toFixed(1)} ms) | ${((on.perSec / off.perSec - 1) * 100).toFixed(1)}% | ${off.errors + on.errors} |`;

/**
 * The cost of row-level security (PLINTH_ROW_LEVEL_SECURITY) on the request
 * path: the same server and database with it off and on, back to back
 * (BENCH_ROUNDS times, alternating which goes first), creates, gets, list
 * pages and label-selected lists over BENCH_TENANTS tenants taking turns,
 * beside raw PostgreSQL point reads as the owner and under the policy.
 */
async function main(): Promise<void> {
  const db = await startBenchPostgres('rls', 58300 + (process.pid % 300));
  const port = 19300 + (process.pid % 300);
  const base = `https://127.0.0.1:${port}`;
  const agent = await benchAgent({ connections: CLIENTS });
  try {
    const results: Record<'on' | 'off', Figures[]> = { on: [], off: [] };
    for (let round = 0; round < ROUNDS; round++) {
      for (const mode of round % 2 === 0 ? (['off', 'on'] as const) : (['on', 'off'] as const)) {
        progress(`round ${round + 1}: row-level security ${mode}`);
        const server = await startServerProcess({ DATABASE_URL: db.url, PLINTH_ROW_LEVEL_SECURITY: mode, PLINTH_DB_POOL_SIZE: '16' }, port);
        try {
          if (round === 0 && mode === 'off') await seed(base, agent);
          results[mode].push(await measure(base, agent, mode));
        } finally {
          server.kill('SIGTERM');
          await new Promise((r) => server.once('exit', r));
        }
      }
    }
    const raw = await rawReads(db.url);
    console.log(`\nRow-level security cost (${TENANTS} tenants taking turns, ${CLIENTS} clients, ${SECONDS} s per load, ${new Date().toISOString()}, load average ${(await import('node:os')).loadavg().map((l) => l.toFixed(1)).join(' ')})\n`);
    console.log('| request | off: per s | on: per s | change | errors |');
    console.log('|---|---|---|---|---|');
    for (let r = 0; r < ROUNDS; r++) {
      const [off, on] = [results.off[r], results.on[r]];
      for (const k of ['creates', 'gets', 'lists', 'selected'] as const) console.log(row(`${k} (round ${r + 1})`, off[k], on[k]));
    }
    console.log(`| raw PostgreSQL point read, one connection | ${raw.owner.toFixed(0)} (owner) | ${raw.policy.toFixed(0)} (request role, policy) | ${((raw.policy / raw.owner - 1) * 100).toFixed(1)}% | 0 |`);
  } finally {
    await agent.close();
    await db.stop();
  }
}

runBenchmark(main);
