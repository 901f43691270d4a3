import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Agent, request } from 'undici';
import type pg from 'pg';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '@plinth/storage';
import { CertificateAuthority } from '../apps/api/src/pki/certificate-authority.js';
import { loadOrCreatePki, type ServingPki } from '../apps/api/src/pki/pki-store.js';

let benchPki: { dir: string; pki: ServingPki } | undefined;

/**
 * The data folder every server of this benchmark run shares, with its PKI
 * (CA, administrator client certificate, ServiceAccount key) created up
 * front so that all replicas and the benchmark's clients agree on it.
 */
export async function benchCredentials(): Promise<{ dir: string; pki: ServingPki }> {
  if (!benchPki) {
    const dir = path.resolve('.test-tmp', `bench-data-${randomBytes(3).toString('hex')}`);
    mkdirSync(dir, { recursive: true });
    benchPki = { dir, pki: await loadOrCreatePki(dir, []) };
  }
  return benchPki;
}

/** TLS options of a benchmark client: trust the generated CA, present the administrator certificate. */
export async function benchTls(): Promise<{ ca: string; cert: string; key: string }> {
  const { pki } = await benchCredentials();
  return { ca: pki.caPem, cert: pki.admin.certPem, key: pki.admin.keyPem };
}

/** TLS options of a benchmark client acting as `user`: a client certificate of the benchmark's CA, O = `groups`. */
export async function benchUserTls(user: string, groups: string[]): Promise<{ ca: string; cert: string; key: string }> {
  const { dir, pki } = await benchCredentials();
  const ca = await CertificateAuthority.load(pki.caPem, readFileSync(path.join(dir, 'pki', 'ca.key'), 'utf8'));
  const pair = await ca.issue({ commonName: user, organizations: groups, usage: 'client', validDays: 1 });
  return { ca: pki.caPem, cert: pair.certPem, key: pair.keyPem };
}

/** An undici Agent over HTTPS as `user` (a client certificate of the benchmark's CA, O = `groups`). */
export async function benchUserAgent(user: string, groups: string[], options: ConstructorParameters<typeof Agent>[0] = {}): Promise<Agent> {
  return new Agent({ ...options, connect: await benchUserTls(user, groups) });
}

/** An undici Agent over HTTPS as the platform administrator; `options` as undici's (connections, pipelining…). */
export async function benchAgent(options: ConstructorParameters<typeof Agent>[0] = {}): Promise<Agent> {
  return new Agent({ ...options, connect: { ...(await benchTls()), ...(options?.connect ?? {}) } });
}

/** Latency percentiles in milliseconds from a list of samples (ms). */
export function percentiles(samples: number[]): { p50: number; p99: number; n: number } {
  const s = [...samples].sort((a, b) => a - b);
  const at = (q: number) => (s.length ? s[Math.min(s.length - 1, Math.floor(q * s.length))] : NaN);
  return { p50: at(0.5), p99: at(0.99), n: s.length };
}

/** Prints a progress line to stderr (figures go to stdout). */
export function progress(msg: string): void {
  process.stderr.write(`[bench] ${msg}\n`);
}

/**
 * Starts a durable PostgreSQL (fsync on, synchronous commit) for a benchmark run: the embedded one, or with
 * BENCH_PG_BIN=<folder of initdb and postgres> an installed one (e.g. /usr/lib/postgresql/15/bin, Debian's);
 * `extraFlags` are more server settings.
 */
export async function startBenchPostgres(name: string, port: number, extraFlags: string[] = []): Promise<EmbeddedDatabase> {
  const dir = path.resolve('.test-tmp', `bench-${name}-${randomBytes(3).toString('hex')}`);
  const binDir = process.env.BENCH_PG_BIN || undefined;
  progress(`starting PostgreSQL ${binDir ? `from ${binDir}` : '(embedded)'} (durable: fsync on, synchronous_commit on) in ${dir}`);
  const db = await startEmbeddedPostgres({ dataDir: dir, port, database: 'plinth', binDir, extraFlags: ['-c', 'shared_buffers=256MB', ...extraFlags] });
  benchDataDirs.set(db, dir);
  return db;
}

const benchDataDirs = new WeakMap<EmbeddedDatabase, string>();

/** The folder {@link startBenchPostgres} started `db` in. */
export function benchDataDir(db: EmbeddedDatabase): string {
  const dir = benchDataDirs.get(db);
  if (!dir) throw new Error('not a database started by startBenchPostgres');
  return dir;
}

/**
 * Starts `node dist/apps/api/src/main.js` as a child process serving HTTPS
 * on `port` with the benchmark's shared data folder (see
 * {@link benchCredentials}) and waits for /readyz.
 */
export async function startServerProcess(env: Record<string, string>, port: number, options: { nodeArgs?: string[] } = {}): Promise<ChildProcess> {
  const { dir } = await benchCredentials();
  // BENCH_SERVER_NODE_ARGS passes Node options to the server alone (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`).
  const nodeArgs = [...(options.nodeArgs ?? []), ...(process.env.BENCH_SERVER_NODE_ARGS ?? '').split(' ').filter((a) => a !== '')];
  const child = spawn(process.execPath, [...nodeArgs, path.resolve('dist/apps/api/src/main.js')], {
    env: { ...process.env, LOG_LEVEL: 'warn', PORT: String(port), HOST: '127.0.0.1', PLINTH_DATA_DIR: dir, ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const agent = await benchAgent();
  // Migrating a fresh database on a loaded 2-core host took more than 30 s (Debian's PostgreSQL 15, load average 18);
  // BENCH_READY_SECONDS allows more (several workers under taskset on a loaded host).
  const deadline = Date.now() + Number(process.env.BENCH_READY_SECONDS ?? 90) * 1000;
  for (;;) {
    try {
      const { request } = await import('undici');
      const res = await request(`https://127.0.0.1:${port}/readyz`, { dispatcher: agent });
      await res.body.text();
      // With PLINTH_WORKERS > 1, /readyz answers 200 only once every worker serves (the check `workers`).
      if (res.statusCode === 200) return child;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      // The caller never gets the child to stop: stop it here, or it outlives the benchmark.
      child.kill('SIGKILL');
      throw new Error('server did not become ready');
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Runs `worker` on `concurrency` loops until `ms` elapse; returns per-op latencies (ms) and ops/s. */
export async function runLoad(concurrency: number, ms: number, worker: (i: number) => Promise<void>): Promise<{ latencies: number[]; opsPerSec: number; errors: number }> {
  const latencies: number[] = [];
  let errors = 0;
  let counter = 0;
  const until = Date.now() + ms;
  const started = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (Date.now() < until) {
        const i = counter++;
        const t0 = process.hrtime.bigint();
        try {
          await worker(i);
          latencies.push(Number(process.hrtime.bigint() - t0) / 1e6);
        } catch {
          errors++;
        }
      }
    }),
  );
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  return { latencies, opsPerSec: latencies.length / seconds, errors };
}

/** Stops a server child process (SIGTERM, then waits for it) and the benchmark's PostgreSQL. */
export async function stopServerAndDatabase(server: ChildProcess, db: EmbeddedDatabase): Promise<void> {
  server.kill('SIGTERM');
  await new Promise((r) => server.once('exit', r));
  await db.stop();
}

/** Runs a benchmark's main function, exiting 1 with the error printed when it fails. */
export function runBenchmark(main: () => Promise<void>): void {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}

/**
 * Node options that let a benchmark collect a server's garbage before it
 * reads its memory: SIGUSR2 runs a full collection (bench/gc-on-signal.ts);
 * see {@link collectServerGarbage}.
 */
export const GC_ON_SIGNAL_NODE_ARGS = ['--expose-gc', `--import=${path.resolve('dist/bench/gc-on-signal.js')}`];

/** Asks a server started with {@link GC_ON_SIGNAL_NODE_ARGS} to collect its garbage, and gives it a moment to. */
export async function collectServerGarbage(server: ChildProcess): Promise<void> {
  server.kill('SIGUSR2');
  await new Promise((r) => setTimeout(r, 1500));
}

/**
 * Waits until the server's watch cache has applied every change up to the
 * newest revision (`plinth_watch_cache_revision` on /metrics): a burst of a
 * million changes keeps its change feed busy for a while, and a watch
 * measured meanwhile would measure the feed, not the catch-up.
 */
export async function settleWatchCache(base: string, agent: Agent, pool: pg.Pool): Promise<number> {
  const t0 = Date.now();
  const newest = Number((await pool.query('SELECT value FROM revision_counter')).rows[0].value);
  while (Date.now() - t0 < 600_000) {
    const text = await (await request(`${base}/metrics`, { dispatcher: agent })).body.text();
    const m = /^plinth_watch_cache_revision (\d+)/m.exec(text);
    if (m && Number(m[1]) >= newest) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  return Date.now() - t0;
}

/** Opens a watch and resolves with the milliseconds until `want` events arrived (or the stream ended). */
export async function watchFor(base: string, agent: Agent, path: string, want: number): Promise<{ ms: number; events: number }> {
  const t0 = process.hrtime.bigint();
  const res = await request(`${base}${path}`, { dispatcher: agent });
  let events = 0;
  let buf = '';
  // Lines are scanned in place and the remainder kept once per chunk: slicing the buffer after every line
  // copied it hundreds of times per chunk and made this client, not the server, the bottleneck.
  for await (const chunk of res.body) {
    buf += chunk.toString();
    let start = 0;
    let nl: number;
    while ((nl = buf.indexOf('\n', start)) >= 0) {
      if (buf.startsWith('{"type":"ADDED"', start)) events++;
      start = nl + 1;
    }
    buf = buf.slice(start);
    if (events >= want) break;
  }
  res.body.destroy();
  return { ms: Number(process.hrtime.bigint() - t0) / 1e6, events };
}
