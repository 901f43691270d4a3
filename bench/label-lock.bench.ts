import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import { sql } from 'kysely';
import { createDatabase, createPostgresStorage, type Database, migrateToLatest, singleShard } from '@plinth/storage';
import { migrations } from '../migrations/index.js';
import { percentiles, progress, startBenchPostgres } from './bench-support.js';
import type { LightOptions, LightResult } from './label-lock-light.worker.js';

/**
 * Other tenants' writes while label-heavy creates run on the same shard
 * (issue 46): how long one write holding the shard's revision counter makes
 * every other write wait.
 *
 * One durable PostgreSQL, two databases: `inline` is migrated up to 0024,
 * the schema before (every index entry made under the counter; the write
 * whose append takes a GIN pending list past 4 MB merges it, inline),
 * `deferred` to the latest (migration 0025: label-heavy rows stored before
 * the counter, pending lists merged by the write batcher after commits). In each: tenant `light`'s BENCH_LIGHT_CLIENTS
 * clients (default 8) create ConfigMaps of 3 labels through the storage's
 * write batcher for BENCH_SECONDS (default 6) alone, then as long again while
 * tenant `heavy` creates BENCH_HEAVY (default 4) ConfigMaps of
 * BENCH_LABELS (default 100,000) labels one after another, as the server
 * sends them. BENCH_MODES picks the modes (default `inline,deferred`).
 *
 * Prints, per mode and phase: the light tenant's creates/s and p50/p99/max
 * latency, each heavy create's time, the cleanings' times, and this
 * process's event-loop delay (the client side: it serialises the heavy
 * bodies, as the server does).
 */
const SECONDS = Number(process.env.BENCH_SECONDS ?? 6);
const LIGHT_CLIENTS = Number(process.env.BENCH_LIGHT_CLIENTS ?? 8);
const HEAVY = Number(process.env.BENCH_HEAVY ?? 4);
const LABELS = Number(process.env.BENCH_LABELS ?? 100_000);
/** Seconds the second phase allows each heavy create (BENCH_HEAVY_SECONDS_EACH, default 3). */
const HEAVY_SECONDS_EACH = Number(process.env.BENCH_HEAVY_SECONDS_EACH ?? 3);
const MODES = (process.env.BENCH_MODES ?? 'inline,deferred').split(',').filter((m) => m === 'inline' || m === 'deferred');

function heavyBody(name: string): Record<string, unknown> {
  const labels: Record<string, string> = {};
  for (let i = 0; i < LABELS; i++) labels[`k${i}`] = `v${i % 100}`;
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'default', labels }, data: { a: 'x'.repeat(1024) } };
}

/** Runs the light tenant's clients on their own thread until `until`. */
function lightLoad(url: string, until: number, tag: string, clean: boolean): Promise<LightResult> {
  const worker = new Worker(new URL('./label-lock-light.worker.js', import.meta.url), { workerData: { url, clients: LIGHT_CLIENTS, until, tag, clean } satisfies LightOptions });
  return new Promise((resolve, reject) => {
    worker.once('message', (r: LightResult) => resolve(r));
    worker.once('error', reject);
  });
}

function line(mode: string, phase: string, r: LightResult, seconds: number): void {
  const p = percentiles(r.latencies);
  const max = Math.max(...r.latencies);
  console.log(`${mode.padEnd(8)} ${phase.padEnd(12)} light creates/s ${(r.latencies.length / seconds).toFixed(0).padStart(5)}  p50 ${p.p50.toFixed(1)} ms  p99 ${p.p99.toFixed(1)} ms  max ${max.toFixed(0)} ms  (n=${p.n})`);
}

async function runMode(adminUrl: string, baseUrl: string, mode: string): Promise<void> {
  const name = `label_lock_${mode}`;
  const admin = createDatabase({ connectionString: adminUrl, maxConnections: 1 });
  await sql`DROP DATABASE IF EXISTS ${sql.ref(name)}`.execute(admin);
  await sql`CREATE DATABASE ${sql.ref(name)}`.execute(admin);
  await admin.destroy();
  const db: Database = createDatabase({ connectionString: baseUrl.replace('/plinth?', `/${name}?`), maxConnections: 16 });
  await migrateToLatest(db, mode === 'inline' ? Object.fromEntries(Object.entries(migrations).filter(([name]) => name < '0025')) : migrations);
  for (const tenant of ['light', 'heavy']) await sql`INSERT INTO tenants (name, uid) VALUES (${tenant}, gen_random_uuid())`.execute(db);
  const cleanings: number[] = [];
  const storage = createPostgresStorage({
    source: singleShard(db),
    batching: { ginCleanIntervalMs: mode === 'inline' ? -1 : 250, onGinClean: (pages, ms) => pages > 0 && cleanings.push(ms) },
  });
  const url = baseUrl.replace('/plinth?', `/${name}?`);
  line(mode, 'alone', await lightLoad(url, Date.now() + SECONDS * 1000, 'alone', mode !== 'inline'), SECONDS);

  // The heavy creates start 1 s into the second phase, which lasts as long as they take and BENCH_SECONDS at least.
  const loop = monitorEventLoopDelay({ resolution: 10 });
  const heavyMs: number[] = [];
  const light = lightLoad(url, Date.now() + Math.max(SECONDS, 1 + HEAVY * HEAVY_SECONDS_EACH) * 1000, 'heavy', mode !== 'inline');
  await new Promise((r) => setTimeout(r, 1000));
  loop.enable();
  for (let i = 0; i < HEAVY; i++) {
    const body = heavyBody(`big-${i}`);
    const s = performance.now();
    await storage.objects.create({ tenant: 'heavy', resource: 'configmaps', namespace: 'default', name: `big-${i}` }, body);
    heavyMs.push(performance.now() - s);
  }
  loop.disable();
  line(mode, 'with heavy', await light, Math.max(SECONDS, 1 + HEAVY * HEAVY_SECONDS_EACH));
  console.log(`${mode.padEnd(8)} heavy creates of ${LABELS} labels: ${heavyMs.map((ms) => ms.toFixed(0)).join(', ')} ms; event-loop delay (main thread: the heavy creates' storage calls) p99 ${(loop.percentile(99) / 1e6).toFixed(0)} ms, max ${(loop.max / 1e6).toFixed(0)} ms`);
  await new Promise((r) => setTimeout(r, 1500));
  console.log(`${mode.padEnd(8)} cleanings that merged pages: ${cleanings.length ? cleanings.map((ms) => ms.toFixed(0)).join(', ') + ' ms' : 'none'}`);
  const { rows } = await sql<{ upd: string; hot: string }>`SELECT n_tup_upd AS upd, n_tup_hot_upd AS hot FROM pg_stat_user_tables WHERE relname = 'objects'`.execute(db);
  console.log(`${mode.padEnd(8)} objects rows updated ${rows[0]?.upd}, of which HOT ${rows[0]?.hot}`);
  await db.destroy();
}

async function main(): Promise<void> {
  const pg = await startBenchPostgres('label-lock', 55000 + Math.floor(Math.random() * 5000));
  try {
    for (const mode of MODES) {
      progress(`mode ${mode}`);
      await runMode(pg.adminUrl, pg.url, mode);
    }
  } finally {
    await pg.stop();
  }
}

void main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
