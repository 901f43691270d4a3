import { loadavg } from 'node:os';
import { type Agent, request } from 'undici';
import pg from 'pg';
import { createDatabase, type EmbeddedDatabase, migrateToLatest } from '@plinth/storage';
import { cpuDuring, postmasterPid, processTreeCpuMs } from './process-cpu.js';
import { benchAgent, benchDataDir, percentiles, progress, runBenchmark, runLoad, startBenchPostgres, startServerProcess } from './bench-support.js';
import { migrations } from '../migrations/index.js';

const CONCURRENCY = 32;
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const TENANT_COUNT = 30;
/** Sizes of the tenants moved, comma-separated (BENCH_MOVE_OBJECTS=10000,100000 by default). */
const MOVE_OBJECTS = (process.env.BENCH_MOVE_OBJECTS ?? '10000,100000').split(',').map(Number);
const MOVE_WRITERS = 4;
const TENANTS = '/apis/tenancy.plinth.dev/v1beta1/tenants';
const SHARDS = '/apis/tenancy.plinth.dev/v1beta1/shards';
const VALUE = 'x'.repeat(1024 - 120);

type Call = (method: 'GET' | 'POST' | 'PATCH', path: string, body?: unknown, contentType?: string) => Promise<{ status: number; body: any; text: string }>;

function caller(base: string, agent: Agent): Call {
  return async (method, path, body, contentType = 'application/json') => {
    const res = await request(`${base}${path}`, { method, dispatcher: agent, body: body === undefined ? undefined : JSON.stringify(body), headers: { 'content-type': contentType } });
    const text = await res.body.text();
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    return { status: res.statusCode, body: parsed, text };
  };
}

/** A call that must succeed; 429 (fair queuing) waits its Retry-After and retries. */
async function must(call: Call, method: 'GET' | 'POST' | 'PATCH', path: string, body?: unknown, contentType?: string): Promise<any> {
  for (;;) {
    const r = await call(method, path, body, contentType);
    if (r.status < 300) return r.body;
    if (r.status !== 429) throw new Error(`${method} ${path}: ${r.status} ${r.text.slice(0, 300)}`);
    await new Promise((res) => setTimeout(res, 200));
  }
}

function configMap(name: string): unknown {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { v: VALUE } };
}

async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, ms = 300_000, everyMs = 100): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

const load = () => loadavg().map((l) => l.toFixed(2)).join(' / ');
const ms = (n: number) => `${n.toFixed(1)} ms`;

/** Starts a durable PostgreSQL for a shard and migrates its database (a shard's schema is the platform's). */
async function startShardPostgres(name: string, port: number): Promise<EmbeddedDatabase> {
  const db = await startBenchPostgres(name, port);
  const kysely = createDatabase({ connectionString: db.url, maxConnections: 1 });
  try {
    await migrateToLatest(kysely, migrations);
  } finally {
    await kysely.destroy();
  }
  return db;
}

/** Registers `url` as shard `name` (a Secret in the platform's default namespace, then the Shard) and waits for Ready. */
async function registerShard(call: Call, name: string, url: string): Promise<void> {
  await must(call, 'POST', '/api/v1/namespaces/default/secrets', { metadata: { name: `shard-${name}` }, data: { url: Buffer.from(url).toString('base64') } });
  await must(call, 'POST', SHARDS, { apiVersion: 'tenancy.plinth.dev/v1beta1', kind: 'Shard', metadata: { name }, spec: { secretRef: { name: `shard-${name}`, namespace: 'default' } } });
  await waitFor(`shard ${name} Ready`, async () => {
    const r = await call('GET', `${SHARDS}/${name}`);
    return r.body?.status?.conditions?.some((c: { type: string; status: string }) => c.type === 'Ready' && c.status === 'True') ? true : undefined;
  });
}

type Tenant = { status?: { shard?: string; shardResourceVersion?: string; conditions?: Array<{ type: string; status: string; message: string }> } };

/** PATCHes the tenant's spec.shard; resolves with the seconds until its Moved condition is True on `to`. */
async function move(call: Call, tenant: string, to: string): Promise<number> {
  const t0 = process.hrtime.bigint();
  await must(call, 'PATCH', `${TENANTS}/${tenant}`, { spec: { shard: to } }, 'application/merge-patch+json');
  await waitFor(`${tenant} Moved to ${to}`, async () => {
    const t = (await call('GET', `${TENANTS}/${tenant}`)).body as Tenant;
    const moved = t?.status?.conditions?.find((c) => c.type === 'Moved');
    return moved?.status === 'True' && t.status?.shard === to ? true : undefined;
  }, 900_000, 50);
  return Number(process.hrtime.bigint() - t0) / 1e9;
}

/** Raw PostgreSQL's durable single-row insert rate on one server: a 1 KiB JSON body, a bigserial key, 32 pg clients. */
async function rawInsert(url: string): Promise<{ opsPerSec: number; p50: number; p99: number }> {
  const pool = new pg.Pool({ connectionString: url, max: CONCURRENCY });
  await pool.query('CREATE TABLE IF NOT EXISTS raw_insert (id bigserial PRIMARY KEY, body jsonb NOT NULL)');
  const body = JSON.stringify(configMap('raw-insert'));
  const run = await runLoad(CONCURRENCY, SECONDS * 1000, async () => void (await pool.query('INSERT INTO raw_insert (body) VALUES ($1::jsonb)', [body])));
  await pool.query('DROP TABLE raw_insert');
  await pool.end();
  return { opsPerSec: run.opsPerSec, ...percentiles(run.latencies) };
}

/** 32 clients creating ConfigMaps round-robin across `tenants` for SECONDS; creates/s, p50/p99 and the CPU split. */
async function createLoad(call: Call, tenants: string[], label: string, pids: { serverPid: number; postgresPids: number[] }) {
  const statuses = new Map<number, number>();
  const cpuBefore = pids.postgresPids.map(processTreeCpuMs);
  const { result, cpu } = await cpuDuring({ serverPid: pids.serverPid, postgresPid: pids.postgresPids[0] }, () =>
    runLoad(CONCURRENCY, SECONDS * 1000, async (i) => {
      const r = await call('POST', `/clusters/${tenants[i % tenants.length]}/api/v1/namespaces/default/configmaps`, configMap(`${label}-${i}`));
      if (r.status !== 201) {
        statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
        throw new Error(`${r.status}`);
      }
    }),
  );
  const postgresMs = pids.postgresPids.map(processTreeCpuMs).reduce((a, b, j) => a + b - cpuBefore[j], 0);
  return { ...result, ...percentiles(result.latencies), statuses, cpu: { ...cpu, postgres: postgresMs } };
}

/** Rows of `tenant` in `table` on the PostgreSQL at `url` (a check from outside the API: the bench reads the shards' tables). */
async function rowsOf(url: string, table: 'objects' | 'changes', tenant: string, resource?: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    // With a resource, only the bench's own ConfigMaps (seed-, pre-, mid-), not those the tenant's controllers publish.
    const where = resource ? " AND resource = $2 AND (name LIKE 'seed-%' OR name LIKE 'pre-%' OR name LIKE 'mid-%')" : '';
    const { rows } = await client.query(`SELECT count(*)::int AS n FROM ${table} WHERE tenant = $1${where}`, resource ? [tenant, resource] : [tenant]);
    return rows[0].n as number;
  } finally {
    await client.end();
  }
}

/** Shard of each tenant, from the Tenant's status. */
async function placements(call: Call, tenants: string[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const t of tenants) out.set(t, ((await must(call, 'GET', `${TENANTS}/${t}`)) as Tenant).status?.shard ?? '?');
  return out;
}

function countByShard(p: Map<string, string>): string {
  const n = new Map<string, number>();
  for (const s of p.values()) n.set(s, (n.get(s) ?? 0) + 1);
  return [...n].sort().map(([s, k]) => `${s}: ${k}`).join(', ');
}

/** Creates `count` ConfigMaps in `tenant` through the API, CONCURRENCY at a time; objects/s. */
async function seed(call: Call, tenant: string, count: number): Promise<number> {
  let next = 0;
  const t0 = Date.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      for (let i = next++; i < count; i = next++) {
        await must(call, 'POST', `/clusters/${tenant}/api/v1/namespaces/default/configmaps`, { metadata: { name: `seed-${i}` }, data: { i: String(i) } });
        if (i % 10000 === 9999) {
          const rate = (i + 1) / ((Date.now() - t0) / 1000);
          progress(`  ${tenant}: ${i + 1} objects (${rate.toFixed(0)}/s, about ${((count - i - 1) / rate).toFixed(0)} s to go; BENCH_MOVE_OBJECTS changes the sizes; load ${load()})`);
        }
      }
    }),
  );
  return count / ((Date.now() - t0) / 1000);
}

/** A sum and count of a Prometheus histogram from /metrics text. */
function histogram(text: string, name: string): { sum: number; count: number } {
  const get = (suffix: string) => Number(new RegExp(`^${name}_${suffix}(?:\\{\\})? ([0-9.e+-]+)`, 'm').exec(text)?.[1] ?? 0);
  return { sum: get('sum'), count: get('count') };
}

/** MOVE_WRITERS writers creating ConfigMaps in `tenant` until `stop()`; each write's latency (ms) and its failures. */
function writers(call: Call, tenant: string, label: string) {
  const latencies: number[] = [];
  const failures: string[] = [];
  let stopped = false;
  let max = 0;
  let maxStartedAt = 0;
  const done = Promise.all(
    Array.from({ length: MOVE_WRITERS }, async (_, w) => {
      for (let n = 0; !stopped; n++) {
        const t0 = process.hrtime.bigint();
        const r = await call('POST', `/clusters/${tenant}/api/v1/namespaces/default/configmaps`, { metadata: { name: `${label}-${w}-${n}` }, data: { w: String(w) } });
        const took = Number(process.hrtime.bigint() - t0) / 1e6;
        if (r.status === 201) {
          latencies.push(took);
          if (took > max) {
            max = took;
            maxStartedAt = performance.now() - took;
          }
        } else failures.push(`${r.status} ${r.body?.message ?? r.text.slice(0, 100)}`);
      }
    }),
  );
  return {
    latencies,
    failures,
    get max() {
      return max;
    },
    /** performance.now() when the slowest write was sent. */
    get maxStartedAt() {
      return maxStartedAt;
    },
    stop: async () => {
      stopped = true;
      await done;
    },
  };
}

/** Reads and writes by 8 clients round-robin over `tenants` for `seconds`: p50/p99 of each, and the non-2xx answers. */
async function mixedLoad(call: Call, tenants: string[], seconds: number, label: string) {
  const reads: number[] = [];
  const writes: number[] = [];
  const errors = new Map<number, number>();
  const until = Date.now() + seconds * 1000;
  let counter = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (Date.now() < until) {
        const i = counter++;
        const tenant = tenants[i % tenants.length];
        const write = i % 2 === 1;
        const t0 = process.hrtime.bigint();
        const r = write
          ? await call('POST', `/clusters/${tenant}/api/v1/namespaces/default/configmaps`, { metadata: { name: `${label}-${i}` }, data: { i: String(i) } })
          : await call('GET', `/clusters/${tenant}/api/v1/namespaces/default`);
        const took = Number(process.hrtime.bigint() - t0) / 1e6;
        if (r.status < 300) (write ? writes : reads).push(took);
        else errors.set(r.status, (errors.get(r.status) ?? 0) + 1);
      }
    }),
  );
  return { read: percentiles(reads), write: percentiles(writes), errors };
}

/** Clients of the dead shard's tenants keep asking (as real ones would): counts of their answers by status. */
function deadShardClients(call: Call, tenants: string[]) {
  const answers = new Map<number, number>();
  let stopped = false;
  const done = Promise.all(
    Array.from({ length: 2 }, async (_, w) => {
      for (let i = w; !stopped; i += 2) {
        const r = await call('GET', `/clusters/${tenants[i % tenants.length]}/api/v1/namespaces/default`);
        answers.set(r.status, (answers.get(r.status) ?? 0) + 1);
        if (r.status === 503) await new Promise((res) => setTimeout(res, 50));
      }
    }),
  );
  return {
    answers,
    stop: async () => {
      stopped = true;
      await done;
    },
  };
}

/** What the phases share: the API, the three servers, the server's pid, and `say` for figures. */
interface Bench {
  call: Call;
  say: (line: string) => void;
  platform: EmbeddedDatabase;
  b: EmbeddedDatabase;
  c: EmbeddedDatabase;
  serverPid: number;
  /** Set once part 3 has killed c's PostgreSQL. */
  cKilled?: boolean;
}

const statusCounts = (m: Map<number, number>) => (m.size ? [...m].map(([k, n]) => `${n}x${k}`).join(', ') : 'none');

/** Part 1: creates/s of 30 tenants on shard b, then of the same tenants spread over default, b and c (20 moved), beside raw PostgreSQL. */
async function createsPhase(x: Bench, tenants: string[]): Promise<void> {
  const pids = { serverPid: x.serverPid, postgresPids: [x.platform, x.b, x.c].map((db) => postmasterPid(benchDataDir(db))) };
  progress(`raw PostgreSQL ceiling: durable single-row INSERT by ${CONCURRENCY} pg clients on one server (shard b) for ${SECONDS}s`);
  const raw = await rawInsert(x.b.url);
  progress(`creating ${TENANT_COUNT} tenants on shard b`);
  for (const t of tenants) await must(x.call, 'POST', TENANTS, { apiVersion: 'tenancy.plinth.dev/v1beta1', kind: 'Tenant', metadata: { name: t }, spec: { shard: 'b' } });
  progress(`placement: ${countByShard(await placements(x.call, tenants))}; ${CONCURRENCY} clients creating ConfigMaps across them for ${SECONDS}s (load ${load()})`);
  const one = await createLoad(x.call, tenants, 'one', pids);
  progress(`1 shard: ${one.opsPerSec.toFixed(0)} creates/s; moving 20 of the tenants (10 to default, 10 to c)`);
  const moves0 = Date.now();
  await Promise.all(tenants.map((t, i) => (i % 3 === 0 ? Promise.resolve(0) : move(x.call, t, i % 3 === 1 ? 'default' : 'c'))));
  const spread = await placements(x.call, tenants);
  progress(`placement: ${countByShard(spread)} (20 moves in ${((Date.now() - moves0) / 1000).toFixed(1)} s); ${CONCURRENCY} clients for ${SECONDS}s (load ${load()})`);
  const three = await createLoad(x.call, tenants, 'three', pids);
  progress(`3 shards: ${three.opsPerSec.toFixed(0)} creates/s`);
  const cores = (cpuMs: number) => (cpuMs / 1000 / SECONDS).toFixed(2);
  const ours = (r: typeof one) => r.cpu.server + r.cpu.postgres + r.cpu.client;
  const row = (r: typeof one) =>
    `${r.opsPerSec.toFixed(0)} creates/s (p50 ${ms(r.p50)}, p99 ${ms(r.p99)}, errors ${r.errors}${r.errors ? ` ${statusCounts(r.statuses)}` : ''}); ` +
    `CPU ${cores(ours(r))} of 2 cores (server ${cores(r.cpu.server)}, PostgreSQL ${cores(r.cpu.postgres)}, load generator ${cores(r.cpu.client)})`;
  const perCreate = (r: typeof one, cpuMs: number) => (cpuMs / (r.opsPerSec * SECONDS)).toFixed(2);
  x.say(`1. creates/s of ${TENANT_COUNT} tenants, ${CONCURRENCY} HTTPS clients, ${SECONDS} s each, one API replica:`);
  x.say(`   raw PostgreSQL ceiling, one server: ${raw.opsPerSec.toFixed(0)} durable inserts/s (p50 ${ms(raw.p50)}, p99 ${ms(raw.p99)})`);
  x.say(`   all on 1 shard (b):     ${row(one)}`);
  x.say(`   spread over 3 (${countByShard(spread)}): ${row(three)}`);
  x.say(`   3 shards / 1 shard = ${(three.opsPerSec / one.opsPerSec).toFixed(2)}x; 1 shard / raw ceiling = ${((one.opsPerSec / raw.opsPerSec) * 100).toFixed(0)}%`);
  x.say(
    `   bound: CPU. 2 cores shared by the API server, three PostgreSQL servers, this load generator and the rest of the machine (load average ${load()}); this run's processes got ${cores(ours(one))} and ${cores(ours(three))} of the 2 cores; ` +
      `a create cost the API server ${perCreate(one, one.cpu.server)} / ${perCreate(three, three.cpu.server)} ms of CPU and PostgreSQL ${perCreate(one, one.cpu.postgres)} / ${perCreate(three, three.cpu.postgres)} ms (1 / 3 shards). ` +
      `One PostgreSQL commits ${raw.opsPerSec.toFixed(0)} inserts/s, so its commits are not the limit, and more shards add PostgreSQL servers but no cores`,
  );
}

/** Part 2, one size: a tenant of `size` objects on b moved to c, MOVE_WRITERS writers before and during; checks delivery and departure. */
async function movePhase(x: Bench, size: number): Promise<void> {
  const tenant = `move-${size}`;
  await must(x.call, 'POST', TENANTS, { apiVersion: 'tenancy.plinth.dev/v1beta1', kind: 'Tenant', metadata: { name: tenant }, spec: { shard: 'b' } });
  progress(`creating ${size} objects in ${tenant} through the API, ${CONCURRENCY} at a time (load ${load()})`);
  const rate = await seed(x.call, tenant, size);
  progress(`${tenant}: ${size} objects at ${rate.toFixed(0)}/s; ${MOVE_WRITERS} writers for 5 s before the move`);
  const before = writers(x.call, tenant, 'pre');
  await new Promise((r) => setTimeout(r, 5000));
  await before.stop();
  const fence0 = histogram((await x.call('GET', '/metrics')).text, 'plinth_tenant_move_fence_seconds');
  const during = writers(x.call, tenant, 'mid');
  progress(`moving ${tenant} to c (load ${load()})`);
  const patchAt = performance.now();
  const seconds = await move(x.call, tenant, 'c');
  await during.stop();
  const fence = histogram((await x.call('GET', '/metrics')).text, 'plinth_tenant_move_fence_seconds');
  const pb = percentiles(before.latencies);
  const pd = percentiles(during.latencies);
  const onDest = await rowsOf(x.c.url, 'objects', tenant, 'configmaps');
  const acked = size + pb.n + pd.n;
  const movedAt = Date.now();
  progress(`waiting for ${tenant}'s rows to leave shard b (after the grace period)`);
  const left = await waitFor(`${tenant} gone from b`, async () => ((await rowsOf(x.b.url, 'objects', tenant)) + (await rowsOf(x.b.url, 'changes', tenant)) === 0 ? true : undefined), 180_000, 500)
    .then(() => `${((Date.now() - movedAt) / 1000).toFixed(1)} s after Moved`)
    .catch(() => 'NOT within 180 s');
  const failed = `${during.failures.length}${during.failures.length ? `: ${during.failures[0]}` : ''}`;
  x.say(
    `   ${size.toLocaleString('en')} objects: moved in ${seconds.toFixed(1)} s (PATCH to Moved); writes before p50 ${ms(pb.p50)} p99 ${ms(pb.p99)} (n ${pb.n}); ` +
      `during p50 ${ms(pd.p50)} p99 ${ms(pd.p99)} max ${ms(during.max)} sent ${((during.maxStartedAt - patchAt) / 1000).toFixed(1)} s after the PATCH (n ${pd.n}, failed ${failed}); ` +
      `fence held ${((fence.sum - fence0.sum) * 1000).toFixed(0)} ms (server metric); seeded at ${rate.toFixed(0)} objects/s; load ${load()}`,
  );
  x.say(`     the bench's ConfigMaps on c: ${onDest} for ${acked} acknowledged creates (${onDest === acked ? 'all there, none extra' : 'MISMATCH'}); the tenant's rows left b ${left}`);
}

/** Part 3: the tenants not on c, read and written before and after c's PostgreSQL is killed. */
async function shardDownPhase(x: Bench, tenants: string[]): Promise<void> {
  // A checkpoint on every server first, so that the moves' copies and removals are not flushed during the phase before the kill.
  for (const db of [x.platform, x.b, x.c]) {
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    await client.query('CHECKPOINT').finally(() => client.end());
  }
  const place = await placements(x.call, tenants);
  const others = tenants.filter((t) => place.get(t) !== 'c');
  const onC = tenants.filter((t) => place.get(t) === 'c');
  progress(`other tenants (${others.length}, on default and b): reads and writes by 8 clients for ${SECONDS}s, shard c up (load ${load()})`);
  const deadBefore = deadShardClients(x.call, onC);
  const up = await mixedLoad(x.call, others, SECONDS, 'up');
  await deadBefore.stop();
  progress(`killing shard c's PostgreSQL (SIGKILL)`);
  await x.c.kill();
  x.cKilled = true;
  const killedAt = Date.now();
  await waitFor('503 naming shard c', async () => {
    const r = await x.call('GET', `/clusters/${onC[0]}/api/v1/namespaces/default`);
    return r.status === 503 && /shard "c"/.test(r.body?.message ?? '') ? true : undefined;
  });
  const knownDown = (Date.now() - killedAt) / 1000;
  progress(`shard c known down after ${knownDown.toFixed(1)} s; the same load for ${SECONDS}s, with 2 clients still asking for c's tenants (load ${load()})`);
  const deadDuring = deadShardClients(x.call, onC);
  const down = await mixedLoad(x.call, others, SECONDS, 'down');
  await deadDuring.stop();
  const row = (r: typeof up) => `read p50 ${ms(r.read.p50)} p99 ${ms(r.read.p99)}, write p50 ${ms(r.write.p50)} p99 ${ms(r.write.p99)} (n ${r.read.n + r.write.n}, errors ${statusCounts(r.errors)})`;
  x.say(`3. ${others.length} other tenants while shard c (${onC.length} tenants) is down, 8 clients, half reads half writes, ${SECONDS} s each:`);
  x.say(`   before: ${row(up)}`);
  x.say(`   c down: ${row(down)}`);
  x.say(`   p99 down / up: reads ${(down.read.p99 / up.read.p99).toFixed(2)}x, writes ${(down.write.p99 / up.write.p99).toFixed(2)}x (goal <= 2x); c known down after ${knownDown.toFixed(1)} s; c's tenants answered ${statusCounts(deadDuring.answers)}`);
}

/**
 * Shards: creates/s of 30 tenants on one shard against the same tenants
 * spread over three (with raw PostgreSQL's insert ceiling of one server),
 * the time a tenant of 10,000 and of 100,000 objects takes to move with its
 * write fence, and other tenants' p99 while one shard's PostgreSQL is down.
 */
async function main(): Promise<void> {
  const port = 58000 + (process.pid % 300) * 3;
  const apiPort = 19000 + (process.pid % 400);
  const started = new Date();
  progress(`load average at start: ${load()}`);
  const platform = await startBenchPostgres('shards-platform', port);
  const [b, c] = await Promise.all([startShardPostgres('shard-b', port + 1), startShardPostgres('shard-c', port + 2)]);
  const server = await startServerProcess({ DATABASE_URL: platform.url, PLINTH_DB_POOL_SIZE: '16' }, apiPort);
  const agent = await benchAgent({ connections: CONCURRENCY });
  const out: string[] = [];
  const x: Bench = { call: caller(`https://127.0.0.1:${apiPort}`, agent), say: (line) => (out.push(line), progress(line)), platform, b, c, serverPid: server.pid! };
  try {
    await registerShard(x.call, 'b', b.url);
    await registerShard(x.call, 'c', c.url);
    const tenants = Array.from({ length: TENANT_COUNT }, (_, i) => `t${i}`);
    await createsPhase(x, tenants);
    x.say(`2. moves (b -> c), ${MOVE_WRITERS} writers on the moving tenant before and during the move:`);
    for (const size of MOVE_OBJECTS) await movePhase(x, size);
    await shardDownPhase(x, tenants);
    console.log(`\nshards benchmark, ${started.toISOString()}, load average at end ${load()}\n`);
    for (const line of out) console.log(line);
  } finally {
    await agent.close();
    server.kill('SIGTERM');
    await new Promise((r) => server.once('exit', r));
    await Promise.all([platform.stop(), b.stop(), x.cKilled ? undefined : c.stop()]);
  }
}

runBenchmark(main);
