// Hardening benchmark (`npm run bench:hardening`): prints, in one run,
// 1. a quiet tenant's GET latency alone, then while another tenant submits
//    the worst regexes and CEL rules it can (catastrophic patterns, rules at
//    the runtime cost limit), and the p99 ratio (goal: within 2x);
// 2. resident memory per idle watch (goal: at most 16 KiB), each watch on its
//    own TLS connection and multiplexed as HTTP/2 streams (as client-go does);
// 3. how long a replica takes to serve writes again after its PostgreSQL is
//    killed and restarted;
// 4. peak resident memory while 5 clients list, in parallel and unpaginated,
//    a namespace of large custom resources (200 of 512 KiB by default), on
//    the server with Node's default heap limit and on a second replica whose
//    heap is capped (what a container memory limit forces).
import { randomBytes } from 'node:crypto';
import https from 'node:https';
import { readFileSync } from 'node:fs';
import type { ChildProcess } from 'node:child_process';
import os from 'node:os';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '@plinth/storage';
import { openH2Watches } from './h2-watches.js';
import { benchTls, percentiles, progress, runBenchmark, runLoad, startBenchPostgres, startServerProcess, stopServerAndDatabase } from './bench-support.js';

const BASE_PORT = 18_000 + Math.floor(Math.random() * 1000);
const LOAD_MS = Number(process.env.BENCH_LOAD_MS ?? 8000);
const IDLE_WATCHES = Number(process.env.BENCH_IDLE_WATCHES ?? 2000);
const H2_STREAMS_PER_SESSION = Number(process.env.BENCH_H2_STREAMS_PER_SESSION ?? 100);
const LIST_OBJECTS = Number(process.env.BENCH_LIST_OBJECTS ?? 200);
const CAPPED_HEAP_MIB = Number(process.env.BENCH_CAPPED_HEAP_MIB ?? 512);
const LIST_OBJECT_KIB = Number(process.env.BENCH_LIST_OBJECT_KIB ?? 512);
const PARALLEL_LISTS = 5;
// The platform administrator's client certificate, over HTTPS as every client.
const tls = await benchTls();
const agent = new https.Agent({ keepAlive: true, maxSockets: 64, ...tls });

/** The resident set of `pid` in KiB; NaN once the process is gone. */
function rssKiB(pid: number): number {
  try {
    return Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN);
  } catch {
    return NaN;
  }
}

/** One HTTP request; resolves with the status (never rejects on HTTP errors). */
function call(base: string, method: string, path: string, body?: unknown): Promise<number> {
  return new Promise((resolve, reject) => {
    const data = body === undefined ? undefined : JSON.stringify(body);
    const req = https.request(`${base}${path}`, { method, agent, headers: data ? { 'content-type': 'application/json' } : {} }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end(data);
  });
}

function crd(plural: string, kind: string, spec: Record<string, unknown>): Record<string, unknown> {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.noisy.example.com` },
    spec: {
      group: 'noisy.example.com',
      scope: 'Namespaced',
      names: { plural, singular: kind.toLowerCase(), kind, listKind: `${kind}List` },
      versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', properties: { spec } } } }],
    },
  };
}

async function waitFor(what: string, cond: () => Promise<boolean>, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await cond().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The noisy tenant's worst: a catastrophic pattern, the same through CEL, and a rule that runs to the runtime cost limit. */
async function installNoise(base: string): Promise<void> {
  const n = `${base}/clusters/noisy`;
  // Tenants are provisioned after start-up: wait until the noisy one serves.
  await waitFor('tenant noisy', async () => (await call(n, 'GET', '/api/v1/namespaces')) === 200);
  await call(n, 'POST', '/api/v1/namespaces', { metadata: { name: 'n' } });
  const crds = [
    crd('patterns', 'Pattern', { type: 'object', properties: { v: { type: 'string', pattern: '^(\\pL+)+$' } } }),
    crd('celpatterns', 'CelPattern', { type: 'object', properties: { v: { type: 'string', maxLength: 100_000 } }, 'x-kubernetes-validations': [{ rule: "self.v.matches('^(\\\\pL+)+$')" }] }),
    crd('costlies', 'Costly', { type: 'object', properties: { l: { type: 'array', maxItems: 1000, items: { type: 'integer' } } }, 'x-kubernetes-validations': [{ rule: 'self.l.all(a, self.l.all(b, a + b > 0))' }] }),
  ];
  for (const c of crds) {
    const code = await call(n, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', c);
    if (code !== 201) throw new Error(`CRD refused: ${code}`);
  }
  for (const p of ['patterns', 'celpatterns', 'costlies']) await waitFor(`${p} served`, async () => (await call(n, 'GET', `/apis/noisy.example.com/v1/namespaces/n/${p}`)) === 200);
}

function noisyWorker(base: string): (i: number) => Promise<void> {
  const n = `${base}/clusters/noisy/apis/noisy.example.com/v1/namespaces/n`;
  const hostile = `${'é'.repeat(20_000)}1`;
  const list = Array.from({ length: 1000 }, (_, i) => i + 1);
  return async (i) => {
    const kind = i % 3;
    if (kind === 0) await call(n, 'POST', '/patterns', { metadata: { generateName: 'p-' }, spec: { v: hostile } });
    else if (kind === 1) await call(n, 'POST', '/celpatterns', { metadata: { generateName: 'c-' }, spec: { v: hostile } });
    else await call(n, 'POST', '/costlies', { metadata: { generateName: 'k-' }, spec: { l: list } });
  };
}

async function quietLatency(base: string, noisy: boolean): Promise<{ p50: number; p99: number; n: number; noisyOps: number }> {
  const quiet = (async () => runLoad(4, LOAD_MS, async () => void (await call(base, 'GET', '/api/v1/namespaces/quiet/configmaps/q'))))();
  const noise = noisy ? runLoad(4, LOAD_MS, noisyWorker(base)) : Promise.resolve({ latencies: [], opsPerSec: 0, errors: 0 });
  const [q, nz] = await Promise.all([quiet, noise]);
  return { ...percentiles(q.latencies), noisyOps: nz.opsPerSec };
}

async function idleWatchMemory(base: string, pid: number): Promise<{ perWatchKiB: number; beforeMiB: number; afterMiB: number }> {
  const path = '/api/v1/namespaces/quiet/configmaps?watch=1';
  const open: ReturnType<typeof https.get>[] = [];
  const openMany = async (count: number) => {
    for (let i = 0; i < count; i += 200) {
      await Promise.all(
        Array.from({ length: Math.min(200, count - i) }, () => new Promise<void>((resolve, reject) => {
          const req = https.get(`${base}${path}`, { agent: false, ...tls }, (res) => {
            res.on('data', () => undefined);
            resolve();
          });
          req.on('error', reject);
          open.push(req);
        })),
      );
    }
  };
  await openMany(100);
  await new Promise((r) => setTimeout(r, 1500));
  const before = rssKiB(pid);
  await openMany(IDLE_WATCHES);
  await new Promise((r) => setTimeout(r, 3000));
  const after = rssKiB(pid);
  for (const r of open) r.destroy();
  return { perWatchKiB: (after - before) / IDLE_WATCHES, beforeMiB: before / 1024, afterMiB: after / 1024 };
}

/** The same as idleWatchMemory with the watches multiplexed, H2_STREAMS_PER_SESSION streams per HTTP/2 connection. */
async function idleH2WatchMemory(base: string, pid: number): Promise<{ perWatchKiB: number; beforeMiB: number; afterMiB: number; sessions: number }> {
  const path = '/api/v1/namespaces/quiet/configmaps?watch=1';
  const warm = await openH2Watches(base, path, 100, H2_STREAMS_PER_SESSION, tls);
  await new Promise((r) => setTimeout(r, 1500));
  const before = rssKiB(pid);
  const watches = await openH2Watches(base, path, IDLE_WATCHES, H2_STREAMS_PER_SESSION, tls);
  await new Promise((r) => setTimeout(r, 3000));
  const after = rssKiB(pid);
  watches.close();
  warm.close();
  return { perWatchKiB: (after - before) / IDLE_WATCHES, beforeMiB: before / 1024, afterMiB: after / 1024, sessions: watches.sessions };
}

/** A namespace `large` of LIST_OBJECTS custom resources of LIST_OBJECT_KIB each (random, so PostgreSQL cannot compress them away). */
async function installLargeObjects(base: string): Promise<void> {
  const definition = crd('blobs', 'Blob', { type: 'object', properties: { data: { type: 'string' } } });
  if ((await call(base, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', definition)) !== 201) throw new Error('blob CRD refused');
  await call(base, 'POST', '/api/v1/namespaces', { metadata: { name: 'large' } });
  await waitFor('blobs served', async () => (await call(base, 'GET', '/apis/noisy.example.com/v1/namespaces/large/blobs')) === 200);
  const data = randomBytes(Math.floor((LIST_OBJECT_KIB * 1024 * 3) / 4)).toString('base64');
  for (let i = 0; i < LIST_OBJECTS; i += 4) {
    await Promise.all(
      Array.from({ length: Math.min(4, LIST_OBJECTS - i) }, async (_, j) => {
        const code = await call(base, 'POST', '/apis/noisy.example.com/v1/namespaces/large/blobs', { apiVersion: 'noisy.example.com/v1', kind: 'Blob', metadata: { name: `b-${i + j}` }, spec: { data } });
        if (code !== 201) throw new Error(`blob create: ${code}`);
      }),
    );
  }
}

/** Reads one whole answer on its own connection; resolves with its size in bytes. */
function drain(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    https
      .get(url, { agent: false, ...tls }, (res) => {
        let bytes = 0;
        res.on('data', (d: Buffer) => (bytes += d.length));
        res.on('end', () => (res.statusCode === 200 ? resolve(bytes) : reject(new Error(`list: ${res.statusCode}`))));
        res.on('error', reject);
      })
      .on('error', reject);
  });
}

/** How 5 parallel lists went on one server: RSS before and at its peak (sampled every 10 ms), or that the server died. */
type ListMemory = { beforeMiB: number; peakMiB: number; seconds: number; listMiB: number } | { died: string };

/** RSS before and at its peak while PARALLEL_LISTS clients list the large namespace unpaginated on `server`. */
async function parallelListMemory(base: string, server: ChildProcess): Promise<ListMemory> {
  const died = new Promise<{ died: string }>((resolve) => server.once('exit', (code, signal) => resolve({ died: `server exited (${signal ?? code})` })));
  const before = rssKiB(server.pid!);
  let peak = before;
  const sample = setInterval(() => (peak = Math.max(peak, rssKiB(server.pid!) || 0)), 10);
  const t0 = Date.now();
  const lists = Promise.all(Array.from({ length: PARALLEL_LISTS }, () => drain(`${base}/apis/noisy.example.com/v1/namespaces/large/blobs`)));
  try {
    const sizes = await Promise.race([lists, died]);
    if (!Array.isArray(sizes)) return sizes;
    return { beforeMiB: before / 1024, peakMiB: Math.max(peak, rssKiB(server.pid!)) / 1024, seconds: (Date.now() - t0) / 1000, listMiB: sizes[0] / 2 ** 20 };
  } catch (err) {
    return await Promise.race([died, new Promise<{ died: string }>((r) => setTimeout(() => r({ died: String(err) }), 2000))]);
  } finally {
    clearInterval(sample);
  }
}

/** Runs `fn` against a fresh replica (same database) on `port`, so memory freed by earlier phases does not hide what `fn` allocates. */
async function onFreshReplica<T>(env: Record<string, string>, port: number, fn: (base: string, pid: number) => Promise<T>): Promise<T> {
  const replica = await startServerProcess(env, port);
  try {
    return await fn(`https://127.0.0.1:${port}`, replica.pid!);
  } finally {
    if (replica.exitCode === null && replica.signalCode === null) {
      replica.kill('SIGTERM');
      await new Promise((r) => replica.once('exit', r));
    }
  }
}

/** The same lists on a second replica (same database) whose V8 heap is capped at CAPPED_HEAP_MIB. */
async function cappedListMemory(env: Record<string, string>, port: number): Promise<ListMemory> {
  const replica = await startServerProcess({ ...env, NODE_OPTIONS: `--max-old-space-size=${CAPPED_HEAP_MIB}` }, port);
  try {
    return await parallelListMemory(`https://127.0.0.1:${port}`, replica);
  } finally {
    if (replica.exitCode === null && replica.signalCode === null) {
      replica.kill('SIGTERM');
      await new Promise((r) => replica.once('exit', r));
    }
  }
}

function listLine(what: string, m: ListMemory): string {
  if ('died' in m) return `${PARALLEL_LISTS} parallel unpaginated lists, ${what}: FAILED, ${m.died}`;
  return `${PARALLEL_LISTS} parallel unpaginated lists of ${m.listMiB.toFixed(1)} MiB each, ${what}: peak RSS ${m.peakMiB.toFixed(1)} MiB (from ${m.beforeMiB.toFixed(1)}, +${(m.peakMiB - m.beforeMiB).toFixed(1)} MiB) in ${m.seconds.toFixed(1)} s`;
}

async function recoveryAfterRestart(db: EmbeddedDatabase, base: string, restart: () => Promise<EmbeddedDatabase>): Promise<{ restartMs: number; serveAgainMs: number }> {
  await db.kill();
  await waitFor('the replica notices', async () => (await call(base, 'GET', '/readyz')) === 503);
  const t0 = Date.now();
  await restart();
  const up = Date.now();
  let n = 0;
  await waitFor('a write succeeds again', async () => (await call(base, 'POST', '/api/v1/namespaces/quiet/configmaps', { metadata: { name: `after-${n++}` } })) === 201, 60_000);
  return { restartMs: up - t0, serveAgainMs: Date.now() - up };
}

runBenchmark(async () => {
  const pgPort = BASE_PORT;
  const apiPort = BASE_PORT + 1;
  let db = await startBenchPostgres('hardening', pgPort);
  const dataDir = db.url.match(/host=([^&]+)/)?.[1];
  const serverEnv = { DATABASE_URL: db.url, PLINTH_TENANTS: 'noisy', PLINTH_DB_POOL_SIZE: '16', PLINTH_MAX_WATCHES_PER_USER: '0' };
  const server = await startServerProcess(serverEnv, apiPort);
  const base = `https://127.0.0.1:${apiPort}`;
  try {
    await call(base, 'POST', '/api/v1/namespaces', { metadata: { name: 'quiet' } });
    await call(base, 'POST', '/api/v1/namespaces/quiet/configmaps', { metadata: { name: 'q' }, data: { a: '1' } });
    await installNoise(base);
    progress(`quiet tenant alone for ${LOAD_MS} ms`);
    const alone = await quietLatency(base, false);
    progress('quiet tenant while the noisy tenant submits catastrophic patterns and cost-limit rules');
    const noisy = await quietLatency(base, true);
    progress(`opening ${IDLE_WATCHES} idle watches`);
    const mem = await idleWatchMemory(base, server.pid!);
    progress(`opening ${IDLE_WATCHES} idle watches as HTTP/2 streams, ${H2_STREAMS_PER_SESSION} per connection, on a fresh replica`);
    const h2mem = await onFreshReplica(serverEnv, apiPort + 2, (b, pid) => idleH2WatchMemory(b, pid));
    progress(`creating ${LIST_OBJECTS} custom resources of ${LIST_OBJECT_KIB} KiB`);
    await installLargeObjects(base);
    progress(`${PARALLEL_LISTS} parallel unpaginated lists of them`);
    const lists = await parallelListMemory(base, server);
    progress(`the same on a second replica with its heap capped at ${CAPPED_HEAP_MIB} MiB`);
    const capped = await cappedListMemory(serverEnv, apiPort + 1);
    progress('killing and restarting PostgreSQL');
    const rec = await recoveryAfterRestart(db, base, async () => {
      db = await startEmbeddedPostgres({ dataDir: decodeURIComponent(dataDir ?? '').replace(/\/run$/, ''), port: pgPort, database: 'plinth', extraFlags: ['-c', 'shared_buffers=256MB'] });
      return db;
    });
    console.log(`machine: ${os.cpus().length} x ${os.cpus()[0]?.model ?? 'cpu'}, ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB, load ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`);
    console.log('case                                         p50 ms   p99 ms   samples');
    console.log(`quiet GET, alone                            ${alone.p50.toFixed(2).padStart(7)}  ${alone.p99.toFixed(2).padStart(7)}  ${String(alone.n).padStart(7)}`);
    console.log(`quiet GET, noisy tenant at full tilt        ${noisy.p50.toFixed(2).padStart(7)}  ${noisy.p99.toFixed(2).padStart(7)}  ${String(noisy.n).padStart(7)}   (noisy writes/s ${noisy.noisyOps.toFixed(0)})`);
    console.log(`p99 ratio noisy/alone: ${(noisy.p99 / alone.p99).toFixed(2)}x (goal: within 2x)`);
    console.log(`memory per idle watch, one TLS connection each: ${mem.perWatchKiB.toFixed(1)} KiB (${IDLE_WATCHES} watches; RSS ${mem.beforeMiB.toFixed(1)} -> ${mem.afterMiB.toFixed(1)} MiB; goal <= 16 KiB)`);
    console.log(
      `memory per idle watch, HTTP/2 streams (${H2_STREAMS_PER_SESSION} per connection): ${h2mem.perWatchKiB.toFixed(1)} KiB (${IDLE_WATCHES} watches over ${h2mem.sessions} connections; RSS ${h2mem.beforeMiB.toFixed(1)} -> ${h2mem.afterMiB.toFixed(1)} MiB; goal <= 16 KiB)`,
    );
    console.log(listLine('default heap limit', lists));
    console.log(listLine(`heap capped at ${CAPPED_HEAP_MIB} MiB`, capped));
    console.log(`PostgreSQL killed: restart took ${rec.restartMs} ms; the replica served a write ${rec.serveAgainMs} ms after PostgreSQL was back`);
  } finally {
    await stopServerAndDatabase(server, db);
  }
});
