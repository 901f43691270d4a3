import { randomUUID } from 'node:crypto';
import { rmSync, statSync } from 'node:fs';
import { loadavg } from 'node:os';
import path from 'node:path';
import { generateX25519Identity, identityToRecipient } from 'age-encryption';
import pg from 'pg';
import { type Agent, request } from 'undici';
import { parseSnapshot, SNAPSHOT_MEDIA_TYPE, SnapshotWriter } from '../apps/api/src/snapshots/snapshot-format.js';
import { openSealed } from '../apps/api/src/snapshots/snapshot-secrets.js';
import { benchAgent, benchDataDir, percentiles, progress, runBenchmark, startBenchPostgres, startServerProcess, stopServerAndDatabase } from './bench-support.js';

const N = Number(process.env.BENCH_SNAPSHOT_N ?? 100_000);
const NAMESPACES = 20;
const CONCURRENCY = 8;
const TENANTS = '/apis/tenancy.plinth.dev/v1beta1/tenants';
const MIB = 1024 * 1024;

type Call = (method: string, path: string, body?: unknown, contentType?: string) => Promise<{ status: number; body: Buffer; headers: Record<string, unknown> }>;

function client(base: string, agent: Agent): Call {
  return async (method, path, body, contentType = 'application/json') => {
    const payload = body === undefined ? undefined : Buffer.isBuffer(body) ? body : JSON.stringify(body);
    const res = await request(`${base}${path}`, { method: method as 'GET', dispatcher: agent, body: payload, headers: { 'content-type': contentType }, headersTimeout: 0, bodyTimeout: 0 });
    return { status: res.statusCode, body: Buffer.from(await res.body.arrayBuffer()), headers: res.headers };
  };
}

/** The i-th object of the large tenant: ConfigMaps (about 400 bytes of data), one in 50 a Secret, one in 10 owned by its namespace's first ConfigMap. */
function objectOf(i: number, owners: Map<number, string>): [string, unknown] {
  const ns = `ns-${i % NAMESPACES}`;
  if (i % 50 === 7) return [`/clusters/big/api/v1/namespaces/${ns}/secrets`, { metadata: { name: `s-${i}` }, stringData: { password: `pw-${i}-${'x'.repeat(40)}` } }];
  const owner = owners.get(i % NAMESPACES);
  const ownerReferences = owner && i % 10 === 3 ? [{ apiVersion: 'v1', kind: 'ConfigMap', name: `cm-${i % NAMESPACES}`, uid: owner }] : undefined;
  return [`/clusters/big/api/v1/namespaces/${ns}/configmaps`, { metadata: { name: `cm-${i}`, labels: { app: `a${i % 7}` }, ownerReferences }, data: { config: `value-${i}-${'y'.repeat(380)}` } }];
}

async function waitActive(call: Call, name: string): Promise<void> {
  for (;;) {
    const r = await call('GET', `${TENANTS}/${name}`);
    if (r.status === 200 && (JSON.parse(r.body.toString()) as { status?: { phase?: string } }).status?.phase === 'Active') return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

async function seed(call: Call): Promise<void> {
  await waitActive(call, 'big');
  await waitActive(call, 'other');
  for (let n = 0; n < NAMESPACES; n++) {
    const r = await call('POST', '/clusters/big/api/v1/namespaces', { metadata: { name: `ns-${n}` } });
    if (r.status !== 201) throw new Error(`namespace ns-${n}: ${r.status} ${r.body}`);
  }
  const owners = new Map<number, string>();
  for (let n = 0; n < NAMESPACES; n++) {
    const [path, body] = objectOf(n, owners);
    const r = await call('POST', path, body);
    if (r.status !== 201) throw new Error(`seed owner ${n}: ${r.status} ${r.body}`);
    owners.set(n, (JSON.parse(r.body.toString()) as { metadata: { uid: string } }).metadata.uid);
  }
  let next = NAMESPACES;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      for (let i = next++; i < N; i = next++) {
        const [path, body] = objectOf(i, owners);
        const r = await call('POST', path, body);
        if (r.status !== 201) throw new Error(`seed ${i}: ${r.status} ${r.body}`);
        if (i % 10_000 === 9_999) progress(`${i + 1} objects created`);
      }
    }),
  );
}

/**
 * Seeds tenant big faster than {@link seed}: the same objects (names,
 * labels, data sizes, Secrets, owner links), made up with uids, restored
 * from one snapshot (`POST tenants/big/snapshot`).
 */
async function seedByRestore(call: Call): Promise<void> {
  await waitActive(call, 'big');
  await waitActive(call, 'other');
  const w = new SnapshotWriter();
  const header = { format: 'tenancy.plinth.dev/tenant-snapshot' as const, version: 1 as const, tenant: { name: 'big', uid: randomUUID(), spec: {} }, revision: 1, createdAt: new Date().toISOString(), secrets: { scheme: 'none' as const } };
  const lines = [w.header(header)];
  for (let n = 0; n < NAMESPACES; n++) lines.push(w.record({ resource: 'namespaces', namespace: '', name: `ns-${n}`, object: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: `ns-${n}`, uid: randomUUID() }, spec: { finalizers: ['kubernetes'] } } }));
  const owners = new Map<number, string>();
  for (let i = 0; i < N; i++) {
    const [path, body] = objectOf(i, owners) as [string, { metadata: Record<string, unknown>; stringData?: Record<string, string>; data?: Record<string, string> }];
    const namespace = path.split('/')[6];
    const uid = randomUUID();
    if (i < NAMESPACES) owners.set(i, uid);
    const secret = path.endsWith('/secrets');
    const metadata = JSON.parse(JSON.stringify({ ...body.metadata, namespace, uid })) as Record<string, unknown>;
    const object = secret
      ? { apiVersion: 'v1', kind: 'Secret', metadata, type: 'Opaque', data: Object.fromEntries(Object.entries(body.stringData!).map(([k, v]) => [k, Buffer.from(v).toString('base64')])) }
      : { apiVersion: 'v1', kind: 'ConfigMap', metadata, data: body.data };
    lines.push(w.record({ resource: secret ? 'secrets' : 'configmaps', namespace, name: String(metadata.name), object }));
  }
  lines.push(w.trailer());
  const r = await call('POST', `${TENANTS}/big/snapshot`, Buffer.concat(lines), SNAPSHOT_MEDIA_TYPE);
  if (r.status !== 200) throw new Error(`seed by restore: ${r.status} ${r.body.subarray(0, 300)}`);
}

/** Creates in tenant `other` one at a time until `stop()`; returns latencies (ms). */
async function otherTenant(call: Call, prefix: string, stop: () => boolean): Promise<number[]> {
  const samples: number[] = [];
  for (let i = 0; !stop(); i++) {
    const t = process.hrtime.bigint();
    const r = await call('POST', '/clusters/other/api/v1/namespaces/default/configmaps', { metadata: { name: `${prefix}-${i}` }, data: { k: 'v' } });
    if (r.status !== 201) throw new Error(`other tenant: ${r.status}`);
    samples.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  return samples;
}

/** Runs `work` while another tenant creates one object at a time; returns its result, seconds, and the other tenant's latencies. */
async function whileOthersWrite<T>(call: Call, prefix: string, work: () => Promise<T>): Promise<{ result: T; seconds: number; during: number[] }> {
  let done = false;
  const during = otherTenant(call, prefix, () => done);
  const t0 = performance.now();
  let result: T;
  try {
    result = await work();
  } finally {
    done = true;
  }
  const seconds = (performance.now() - t0) / 1000;
  return { result, seconds, during: await during };
}

const fmt = (p: { p50: number; p99: number; n: number }) => `p50 ${p.p50.toFixed(1)} ms, p99 ${p.p99.toFixed(1)} ms (n=${p.n})`;

/**
 * The raw PostgreSQL peer of the export and the restore: a bare COPY of
 * the tenant's `objects` rows to a file on the database server, and back
 * into an empty table of the same shape and indexes (no change log, no
 * revisions, no accounting, no JSON on the server, no client): the ceiling
 * of moving the tenant's rows, each while the other tenant writes.
 */
async function rawPeer(call: Call, sql: pg.Pool, file: string) {
  const out = await whileOthersWrite(call, 'copy-out', () => sql.query(`COPY (SELECT * FROM objects WHERE tenant = 'big') TO '${file}'`));
  const bytes = statSync(file).size;
  await sql.query('CREATE TABLE peer_objects (LIKE objects INCLUDING DEFAULTS INCLUDING INDEXES)');
  const back = await whileOthersWrite(call, 'copy-in', () => sql.query(`COPY peer_objects FROM '${file}'`));
  await sql.query('DROP TABLE peer_objects');
  rmSync(file, { force: true });
  return { out, back, bytes, rows: Number(out.result.rowCount), restored: Number(back.result.rowCount) };
}

const ratio = (during: number[], idle: number[]) => (percentiles(during).p99 / percentiles(idle).p99).toFixed(1);

/**
 * Tenant snapshots at scale (issue 42): a tenant of BENCH_SNAPSHOT_N
 * objects (ConfigMaps of ~400 bytes, 2% Secrets, 10% with an owner) is
 * exported (Secrets sealed to one age recipient) and restored into a new
 * tenant; prints objects/s and MiB/s of both, the snapshot's size against
 * the tenant's stored bytes, the raw PostgreSQL peer (a bare COPY of the
 * tenant's rows out and back in), and another tenant's create latency
 * while each runs against its idle baseline.
 */
async function main(): Promise<void> {
  const pgPort = 59500 + (process.pid % 400);
  const apiPort = 20500 + (process.pid % 400);
  const db = await startBenchPostgres('snapshots', pgPort);
  const server = await startServerProcess({ DATABASE_URL: db.url, PLINTH_DB_POOL_SIZE: '16', PLINTH_TENANTS: 'big,other' }, apiPort);
  const agent = await benchAgent({ connections: CONCURRENCY + 4 });
  const call = client(`https://127.0.0.1:${apiPort}`, agent);
  const sql = new pg.Pool({ connectionString: db.url, max: 2 });
  try {
    // BENCH_SNAPSHOT_SEED=api: through N API creates (minutes on a busy host); else restored from a made-up snapshot.
    progress(`seeding tenant big with ${N} objects (${process.env.BENCH_SNAPSHOT_SEED === 'api' ? 'API creates' : 'restore of a made-up snapshot'})`);
    await (process.env.BENCH_SNAPSHOT_SEED === 'api' ? seed(call) : seedByRestore(call));
    const [{ bytes, rows }] = (
      await sql.query<{ bytes: string; rows: string }>(
        "SELECT sum(pg_column_size(o.*))::bigint AS bytes, count(*) AS rows FROM objects o WHERE tenant = 'big'",
      )
    ).rows;
    // The baseline is taken before and again after the work (BENCH_SNAPSHOT_IDLE_SECONDS each): on a shared host their gap shows the noise.
    const idleMs = Number(process.env.BENCH_SNAPSHOT_IDLE_SECONDS ?? 10) * 1000;
    const idleFor = (prefix: string) => {
      const until = Date.now() + idleMs;
      return otherTenant(call, prefix, () => Date.now() > until);
    };
    progress(`other tenant, idle baseline (${idleMs / 1000} s)`);
    const idle = await idleFor('idle');

    const identity = await generateX25519Identity();
    const recipient = await identityToRecipient(identity);
    progress('exporting tenant big');
    const exp = await whileOthersWrite(call, 'export', () => call('GET', `${TENANTS}/big/snapshot?recipient=${recipient}`));
    if (exp.result.status !== 200) throw new Error(`export: ${exp.result.status} ${exp.result.body.subarray(0, 300)}`);
    const snapshot = exp.result.body;
    const parsed = parseSnapshot(snapshot);
    const objects = parsed.records.length;

    progress('opening the Secrets (as the CLI does) and creating tenant restored');
    parsed.header = await openSealed(parsed.header, parsed.records, [identity]);
    const w = new SnapshotWriter();
    const body = Buffer.concat([w.header(parsed.header), ...parsed.records.map((r) => w.record(r)), w.trailer()]);
    const created = await call('POST', TENANTS, { apiVersion: 'tenancy.plinth.dev/v1beta1', kind: 'Tenant', metadata: { name: 'restored' }, spec: {} });
    if (created.status !== 201) throw new Error(`create tenant: ${created.status}`);
    await waitActive(call, 'restored');
    progress('restoring into tenant restored');
    const res = await whileOthersWrite(call, 'restore', () => call('POST', `${TENANTS}/restored/snapshot`, body, SNAPSHOT_MEDIA_TYPE));
    if (res.result.status !== 200) throw new Error(`restore: ${res.result.status} ${res.result.body.subarray(0, 300)}`);
    const [{ restored }] = (await sql.query<{ restored: string }>("SELECT count(*) AS restored FROM objects WHERE tenant = 'restored'")).rows;
    progress('raw PostgreSQL peer: COPY of the tenant rows out to a file and back into an empty table');
    const raw = await rawPeer(call, sql, path.resolve(benchDataDir(db), 'pgdata', 'peer.copy'));
    progress(`other tenant, idle again (${idleMs / 1000} s)`);
    const idleAfter = await idleFor('idle-after');

    console.log(`\nsnapshots benchmark: tenant of ${rows} objects (${N} ${process.env.BENCH_SNAPSHOT_SEED === 'api' ? 'created through the API' : 'restored from a made-up snapshot'}; ConfigMaps ~400 B, 2% Secrets, 10% owned), one replica, durable PostgreSQL, ${new Date().toISOString().slice(0, 10)}\n`);
    console.log(`export:  ${objects} objects, ${(snapshot.length / MIB).toFixed(1)} MiB in ${exp.seconds.toFixed(1)} s = ${(objects / exp.seconds).toFixed(0)} objects/s, ${(snapshot.length / MIB / exp.seconds).toFixed(1)} MiB/s (Secrets sealed to 1 age recipient)`);
    console.log(`restore: ${objects} objects, ${(body.length / MIB).toFixed(1)} MiB in ${res.seconds.toFixed(1)} s = ${(objects / res.seconds).toFixed(0)} objects/s, ${(body.length / MIB / res.seconds).toFixed(1)} MiB/s (${restored} rows in the new tenant)`);
    console.log(`size: snapshot ${(snapshot.length / MIB).toFixed(1)} MiB against the tenant's stored rows ${(Number(bytes) / MIB).toFixed(1)} MiB (sum of pg_column_size over its objects rows) = ${(snapshot.length / Number(bytes)).toFixed(2)}x`);
    console.log(`raw peer: COPY out ${raw.rows} rows, ${(raw.bytes / MIB).toFixed(1)} MiB in ${raw.out.seconds.toFixed(1)} s = ${(raw.rows / raw.out.seconds).toFixed(0)} rows/s, ${(raw.bytes / MIB / raw.out.seconds).toFixed(1)} MiB/s; COPY in ${raw.restored} rows in ${raw.back.seconds.toFixed(1)} s = ${(raw.restored / raw.back.seconds).toFixed(0)} rows/s, ${(raw.bytes / MIB / raw.back.seconds).toFixed(1)} MiB/s`);
    console.log(`against the raw peer: export ${(objects / exp.seconds / (raw.rows / raw.out.seconds)).toFixed(2)}x of COPY out, restore ${(objects / res.seconds / (raw.restored / raw.back.seconds)).toFixed(2)}x of COPY in (objects/s over rows/s)`);
    console.log(`another tenant's creates (one client): idle ${fmt(percentiles(idle))}, idle again at the end ${fmt(percentiles(idleAfter))}; during the export ${fmt(percentiles(exp.during))}; during the restore ${fmt(percentiles(res.during))}; during COPY out ${fmt(percentiles(raw.out.during))}; during COPY in ${fmt(percentiles(raw.back.during))}`);
    console.log(`other tenant's p99 against idle: export ${ratio(exp.during, idle)}x, restore ${ratio(res.during, idle)}x (goal: 1.5x); COPY out ${ratio(raw.out.during, idle)}x, COPY in ${ratio(raw.back.during, idle)}x; load average at the end ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
  } finally {
    await sql.end();
    await agent.close();
    await stopServerAndDatabase(server, db);
  }
}

runBenchmark(main);
