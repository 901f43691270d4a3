// The cost of PLINTH_EVENT_TTL: N Events (BENCH_EVENTS_N, default 1,000,000) written through the store into
// one tenant (10 namespaces), then one sweep of the Event TTL controller after they expired: seconds, Events
// removed per second, PostgreSQL's CPU seconds, and the usage row before and after (it must fall back exactly).
// Also the idle sweep (N live Events, none expired yet), what each interval costs in steady state.
// Usage: npm run bench:event-ttl   (BENCH_EVENTS_N=200000 for a shorter run)
import { pino } from 'pino';
import { sql } from 'kysely';
import { createDatabase, createPostgresStorage, EventExpiryRepository, migrateToLatest } from '@plinth/storage';
import { EventTtlController } from '../apps/api/src/events/event-ttl.controller.js';
import { benchDataDir, progress, runBenchmark, startBenchPostgres } from './bench-support.js';
import { cpuDuring, postmasterPid } from './process-cpu.js';
import { migrations } from '../migrations/index.js';

const N = Number(process.env.BENCH_EVENTS_N ?? 1_000_000);
const WRITERS = 256;
const TTL_MS = 2000;

function event(i: number): Record<string, unknown> {
  const ns = `ns-${i % 10}`;
  return {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name: `pod-${i}.18c0d0a1b2c3d4e5`, namespace: ns, uid: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`, creationTimestamp: '2026-12-02T05:00:00Z' },
    involvedObject: { apiVersion: 'v1', kind: 'Pod', namespace: ns, name: `pod-${i}`, uid: '11111111-2222-4333-8444-555555555555' },
    reason: 'BackOff',
    message: 'Back-off restarting failed container app in pod',
    source: { component: 'kubelet', host: 'node-1' },
    firstTimestamp: '2026-12-02T05:00:00Z',
    lastTimestamp: '2026-12-02T05:00:00Z',
    count: 1,
    type: 'Warning',
  };
}

runBenchmark(async () => {
  const pg = await startBenchPostgres('event-ttl', 55491);
  const db = createDatabase({ connectionString: pg.url, maxConnections: 16 });
  try {
    await migrateToLatest(db, migrations);
    const objects = createPostgresStorage({ source: db });
    const expiry = new EventExpiryRepository(db);
    const usage = async () => {
      const { rows } = await sql<{ objects: string; bytes: string }>`SELECT objects, bytes FROM tenant_usage WHERE tenant = 'default' AND usage_key = ''`.execute(db);
      return rows[0] ? { objects: Number(rows[0].objects), bytes: Number(rows[0].bytes) } : { objects: 0, bytes: 0 };
    };
    const before = await usage();
    progress(`writing ${N} Events through the store (${WRITERS} writers)`);
    const t0 = Date.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: WRITERS }, async () => {
        for (let i = next++; i < N; i = next++) {
          const e = event(i);
          const meta = e.metadata as { name: string; namespace: string };
          await objects.create({ tenant: 'default', resource: 'events', namespace: meta.namespace, name: meta.name }, e);
          if (i % 50_000 === 49_999) progress(`${i + 1} written (${Math.round((i + 1) / ((Date.now() - t0) / 1000))}/s)`);
        }
      }),
    );
    const writeSeconds = (Date.now() - t0) / 1000;
    await sql`VACUUM ANALYZE objects`.execute(db);
    const full = await usage();

    const controller = new EventTtlController({ expiry, objects, logger: pino({ level: 'silent' }), ttlMs: TTL_MS });
    // The idle sweep: records the mark after the last write; nothing is expired yet.
    const i0 = Date.now();
    const idle = await controller.sweep();
    const idleMs = Date.now() - i0;
    if (idle.expired !== 0) throw new Error(`idle sweep removed ${idle.expired}`);
    await new Promise((r) => setTimeout(r, TTL_MS + 100));

    progress('sweeping the expired Events');
    const s0 = Date.now();
    const { result: swept, cpu } = await cpuDuring({ postgresPid: postmasterPid(benchDataDir(pg)) }, () => controller.sweep());
    const sweepSeconds = (Date.now() - s0) / 1000;
    const after = await usage();
    if (swept.expired !== N) throw new Error(`swept ${swept.expired} of ${N}`);
    if (after.objects !== before.objects || after.bytes !== before.bytes) throw new Error(`usage ${JSON.stringify(after)} is not back to ${JSON.stringify(before)}`);
    console.log(
      JSON.stringify({
        bench: 'event-ttl',
        events: N,
        writeSeconds: +writeSeconds.toFixed(1),
        idleSweepMs: idleMs,
        sweepSeconds: +sweepSeconds.toFixed(1),
        expiredPerSecond: Math.round(N / sweepSeconds),
        pages: swept.pages,
        cpuSeconds: { postgres: +(cpu.postgres / 1000).toFixed(1), controller: +(cpu.client / 1000).toFixed(1) },
        usageBytes: { before: before.bytes, full: full.bytes, after: after.bytes },
        usageObjects: { before: before.objects, full: full.objects, after: after.objects },
      }),
    );
  } finally {
    await db.destroy();
    await pg.stop();
  }
});
