// Hardening benchmark (`npm run bench:hardening`): prints, in one run,
// 1. a quiet tenant's GET latency alone, then while another tenant submits
//    the worst regexes and CEL rules it can (catastrophic patterns, rules at
//    the runtime cost limit), and the p99 ratio (goal: within 2x); each
//    tenant's requests come from its owner (a tenant user, not the platform
//    administrator, whom flow control exempts as upstream exempts
//    system:masters);
//    then the noisy tenant's flood on BENCH_FLOOD_CONNECTIONS connections
//    (256), more than its queues hold: the refusals per second and the
//    server's CPU per refused request;
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
import { once } from 'node:events';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import { openH2Watches } from './h2-watches.js';
import { noisyWorker, type NoiseOptions } from './hardening-noise.worker.js';
import { benchTls, benchUserTls, percentiles, progress, runBenchmark, runLoad, startBenchPostgres, startServerProcess, stopServerAndDatabase } from './bench-support.js';

const BASE_PORT = 18_000 + Math.floor(Math.random() * 1000);
const LOAD_MS = Number(process.env.BENCH_LOAD_MS ?? 8000);
const IDLE_WATCHES = Number(process.env.BENCH_IDLE_WATCHES ?? 2000);
const H2_STREAMS_PER_SESSION = Number(process.env.BENCH_H2_STREAMS_PER_SESSION ?? 100);
const LIST_OBJECTS = Number(process.env.BENCH_LIST_OBJECTS ?? 200);
const CAPPED_HEAP_MIB = Number(process.env.BENCH_CAPPED_HEAP_MIB ?? 512);
const LIST_OBJECT_KIB = Number(process.env.BENCH_LIST_OBJECT_KIB ?? 512);
const PARALLEL_LISTS = 5;
const FLOOD_CONNECTIONS = Number(process.env.BENCH_FLOOD_CONNECTIONS ?? 256);
const FLOOD_MS = Number(process.env.BENCH_FLOOD_MS ?? 7000);
/** BENCH_ONLY=quiet runs the quiet-tenant phases alone (all phases by default). */
const ONLY = process.env.BENCH_ONLY?.split(',');
// The platform administrator's client certificate, over HTTPS as every client.
const tls = await benchTls();
const agent = new https.Agent({ keepAlive: true, maxSockets: 64, ...tls });
// The owners of the two tenants: ordinary tenant users, subject to flow control.
const quietAgent = new https.Agent({ keepAlive: true, maxSockets: 64, ...(await benchUserTls('bob', [])) });
const noisyTls = await benchUserTls('mallory', []);
const noisyAgent = new https.Agent({ keepAlive: true, maxSockets: 64, ...noisyTls });
/** BENCH_NOISE_ON_MAIN=1: the noisy tenant's clients share the quiet tenant's event loop (the benchmark's arrangement until 2026-11-26). */
const NOISE_ON_MAIN = process.env.BENCH_NOISE_ON_MAIN === '1';

/** The resident set of `pid` in KiB; NaN once the process is gone. */
function rssKiB(pid: number): number {
  try {
    return Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN);
  } catch {
    return NaN;
  }
}

/** CPU seconds `pid` has used so far, all its threads (utime + stime of /proc/<pid>/stat). */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /, '').split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** The server's event-loop delay p99 and maximum in ms since the previous scrape (prom-client resets its histogram on every scrape). */
async function serverLoopDelay(base: string): Promise<{ p99: number; max: number }> {
  const text = await metricsText(base);
  const value = (name: string) => Number(new RegExp(`^${name} ([0-9.e+-]+)`, 'm').exec(text)?.[1] ?? NaN) * 1000;
  return { p99: value('plinth_nodejs_eventloop_lag_p99_seconds'), max: value('plinth_nodejs_eventloop_lag_max_seconds') };
}

/** The server's /metrics text. */
function metricsText(base: string): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    https.get(`${base}/metrics`, { agent }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve(body));
    }).on('error', reject);
  });
}

/** 429s flow control has answered `tenant` so far, all reasons. */
async function refusedSoFar(base: string, tenant: string): Promise<number> {
  const text = await metricsText(base);
  let n = 0;
  for (const m of text.matchAll(new RegExp(`^plinth_flowcontrol_rejected_requests_total\\{tenant="${tenant}",[^}]*\\} ([0-9.e+]+)$`, 'gm'))) n += Number(m[1]);
  return n;
}

/** What the noisy tenant's loops cost the server: refusals per second and server CPU, measured from 2 s in (after the TLS handshakes) to 0.5 s before the end. */
interface NoiseCost {
  refusedPerSec: number;
  cpuPerSecond: number;
  codes: Record<number, number>;
}

/** The noisy tenant's writes on `connections` loops at once, nothing else running. */
async function noiseCost(base: string, pid: number, connections: number, ms: number): Promise<NoiseCost> {
  const options: NoiseOptions = { base, tls: noisyTls, ms, concurrency: connections, maxSockets: connections };
  const worker = new Worker(new URL('./hardening-noise.worker.js', import.meta.url), { workerData: options });
  const result = once(worker, 'message') as Promise<[{ codes: Record<number, number> }]>;
  await new Promise((r) => setTimeout(r, 2000));
  const [c0, r0, t0] = [cpuSeconds(pid), await refusedSoFar(base, 'noisy'), performance.now()];
  await new Promise((r) => setTimeout(r, ms - 2500));
  const [c1, r1, t1] = [cpuSeconds(pid), await refusedSoFar(base, 'noisy'), performance.now()];
  const [{ codes }] = await result;
  await worker.terminate();
  const seconds = (t1 - t0) / 1000;
  return { refusedPerSec: (r1 - r0) / seconds, cpuPerSecond: (c1 - c0) / seconds, codes };
}

/**
 * The server's CPU per refused request: the noisy tenant's 4 loops alone
 * (the validation its share pays for, and whatever it is refused), then
 * its flood on FLOOD_CONNECTIONS connections at once (more than its hold
 * and queues take, so most are refused at once, as an open-loop flood
 * would be); the CPU the flood adds over the 4 loops, per refusal it adds.
 */
async function flood(base: string, pid: number): Promise<{ loops: NoiseCost; flood: NoiseCost; cpuPerRefusedUs: number }> {
  const loops = await noiseCost(base, pid, 4, 5000);
  const fl = await noiseCost(base, pid, FLOOD_CONNECTIONS, FLOOD_MS);
  const cpuPerRefusedUs = ((fl.cpuPerSecond - loops.cpuPerSecond) / Math.max(1, fl.refusedPerSec - loops.refusedPerSec)) * 1e6;
  return { loops, flood: fl, cpuPerRefusedUs };
}

/** One HTTP request as `as` (the administrator by default); resolves with the status (never rejects on HTTP errors). */
function call(base: string, method: string, path: string, body?: unknown, as: https.Agent = agent): Promise<number> {
  return new Promise((resolve, reject) => {
    const data = body === undefined ? undefined : JSON.stringify(body);
    const req = https.request(`${base}${path}`, { method, agent: as, headers: data ? { 'content-type': 'application/json' } : {} }, (res) => {
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
  await waitFor('tenant noisy', async () => (await call(n, 'GET', '/api/v1/namespaces', undefined, noisyAgent)) === 200);
  await call(n, 'POST', '/api/v1/namespaces', { metadata: { name: 'n' } }, noisyAgent);
  const crds = [
    crd('patterns', 'Pattern', { type: 'object', properties: { v: { type: 'string', pattern: '^(\\pL+)+$' } } }),
    crd('celpatterns', 'CelPattern', { type: 'object', properties: { v: { type: 'string', maxLength: 100_000 } }, 'x-kubernetes-validations': [{ rule: "self.v.matches('^(\\\\pL+)+$')" }] }),
    crd('costlies', 'Costly', { type: 'object', properties: { l: { type: 'array', maxItems: 1000, items: { type: 'integer' } } }, 'x-kubernetes-validations': [{ rule: 'self.l.all(a, self.l.all(b, a + b > 0))' }] }),
  ];
  for (const c of crds) {
    const code = await call(n, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', c, noisyAgent);
    if (code !== 201) throw new Error(`CRD refused: ${code}`);
  }
  for (const p of ['patterns', 'celpatterns', 'costlies']) await waitFor(`${p} served`, async () => (await call(n, 'GET', `/apis/noisy.example.com/v1/namespaces/n/${p}`, undefined, noisyAgent)) === 200);
}

/** Runs the noisy tenant's 4 loops for LOAD_MS on a worker thread (or, with BENCH_NOISE_ON_MAIN=1, on this event loop as before 2026-11-26 08:30). */
async function noise(base: string): Promise<{ opsPerSec: number; codes: Record<number, number> }> {
  if (NOISE_ON_MAIN) {
    const codes: Record<number, number> = {};
    return { ...(await runLoad(4, LOAD_MS, noisyWorker(noisyAgent, base, codes))), codes };
  }
  const options: NoiseOptions = { base, tls: noisyTls, ms: LOAD_MS, concurrency: 4 };
  const worker = new Worker(new URL('./hardening-noise.worker.js', import.meta.url), { workerData: options });
  const [result] = (await once(worker, 'message')) as [{ opsPerSec: number; codes: Record<number, number> }];
  await worker.terminate();
  return result;
}

async function quietLatency(base: string, noisy: boolean, pid: number): Promise<{ p50: number; p99: number; n: number; errors: number; noisyOps: number; noisyCodes: Record<number, number>; cpuPerSecond: number; clientLoopP99: number; serverLoop: { p99: number; max: number } }> {
  await serverLoopDelay(base);
  const cpu0 = cpuSeconds(pid);
  const t0 = performance.now();
  // The benchmark's own event-loop delay: what of the quiet latency is the client's, not the server's.
  const loop = monitorEventLoopDelay({ resolution: 5 });
  loop.enable();
  const get = async () => {
    const code = await call(base, 'GET', '/clusters/quiet/api/v1/namespaces/default/configmaps/q', undefined, quietAgent);
    if (code !== 200) throw new Error(`quiet GET: ${code}`);
  };
  const quiet = runLoad(4, LOAD_MS, get);
  const noisyRun = noisy ? noise(base) : Promise.resolve({ opsPerSec: 0, codes: {} });
  const [q, nz] = await Promise.all([quiet, noisyRun]);
  loop.disable();
  const cpuPerSecond = (cpuSeconds(pid) - cpu0) / ((performance.now() - t0) / 1000);
  const serverLoop = await serverLoopDelay(base);
  return { ...percentiles(q.latencies), errors: q.errors, noisyOps: nz.opsPerSec, noisyCodes: nz.codes, cpuPerSecond, clientLoopP99: loop.percentile(99) / 1e6, serverLoop };
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

/** Creates tenant `name` owned by `owner` (a tenant user) as the platform administrator. */
async function createTenant(base: string, name: string, owner: string): Promise<void> {
  const tenant = { apiVersion: 'tenancy.plinth.dev/v1beta1', kind: 'Tenant', metadata: { name }, spec: { owners: [{ kind: 'User', name: owner }] } };
  const code = await call(base, 'POST', '/apis/tenancy.plinth.dev/v1beta1/tenants', tenant);
  if (code !== 201) throw new Error(`creating tenant ${name}: ${code}`);
}

const runs = (phase: string) => !ONLY || ONLY.includes(phase);

runBenchmark(async () => {
  const pgPort = BASE_PORT;
  const apiPort = BASE_PORT + 1;
  let db = await startBenchPostgres('hardening', pgPort);
  const dataDir = db.url.match(/host=([^&]+)/)?.[1];
  const serverEnv = { DATABASE_URL: db.url, PLINTH_DB_POOL_SIZE: '16', PLINTH_MAX_WATCHES_PER_USER: '0' };
  const server = await startServerProcess(serverEnv, apiPort);
  const base = `https://127.0.0.1:${apiPort}`;
  const lines: string[] = [`machine: ${os.cpus().length} x ${os.cpus()[0]?.model ?? 'cpu'}, ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB, load at start ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`];
  try {
    await call(base, 'POST', '/api/v1/namespaces', { metadata: { name: 'quiet' } });
    await call(base, 'POST', '/api/v1/namespaces/quiet/configmaps', { metadata: { name: 'q' }, data: { a: '1' } });
    if (runs('quiet')) {
      await createTenant(base, 'quiet', 'bob');
      await createTenant(base, 'noisy', 'mallory');
      const q = `${base}/clusters/quiet`;
      await waitFor('tenant quiet', async () => (await call(q, 'POST', '/api/v1/namespaces/default/configmaps', { metadata: { name: 'q' }, data: { a: '1' } }, quietAgent)) === 201);
      await installNoise(base);
      progress(`quiet tenant alone for ${LOAD_MS} ms`);
      const alone = await quietLatency(base, false, server.pid!);
      progress('quiet tenant while the noisy tenant submits catastrophic patterns and cost-limit rules');
      const noisy = await quietLatency(base, true, server.pid!);
      progress(`the noisy tenant floods on ${FLOOD_CONNECTIONS} connections for ${FLOOD_MS} ms`);
      const fl = await flood(base, server.pid!);
      lines.push(
        'case (each tenant as its owner)              p50 ms   p99 ms   samples',
        `quiet GET, alone                            ${alone.p50.toFixed(2).padStart(7)}  ${alone.p99.toFixed(2).padStart(7)}  ${String(alone.n).padStart(7)}`,
        `quiet GET, noisy tenant at full tilt        ${noisy.p50.toFixed(2).padStart(7)}  ${noisy.p99.toFixed(2).padStart(7)}  ${String(noisy.n).padStart(7)}   (noisy writes/s ${noisy.noisyOps.toFixed(0)}, answers ${Object.entries(noisy.noisyCodes).map(([c, n]) => `${c}: ${n}`).join(', ')}; quiet errors ${alone.errors + noisy.errors})`,
        `benchmark client's own event-loop delay p99: alone ${alone.clientLoopP99.toFixed(1)} ms, with the noisy tenant ${noisy.clientLoopP99.toFixed(1)} ms (noisy clients ${NOISE_ON_MAIN ? 'on the same event loop' : 'on a worker thread'})`,
        `server's event-loop delay p99 / max: alone ${alone.serverLoop.p99.toFixed(1)} / ${alone.serverLoop.max.toFixed(1)} ms, with the noisy tenant ${noisy.serverLoop.p99.toFixed(1)} / ${noisy.serverLoop.max.toFixed(1)} ms`,
        `server CPU (all threads): alone ${alone.cpuPerSecond.toFixed(2)} s/s (${((alone.cpuPerSecond * 1000) / (alone.n / (LOAD_MS / 1000))).toFixed(2)} ms per quiet GET); with the noisy tenant ${noisy.cpuPerSecond.toFixed(2)} s/s`,
        `p99 ratio noisy/alone: ${(noisy.p99 / alone.p99).toFixed(2)}x (goal: within 2x); load after it ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`,
        `noisy tenant alone, 4 loops: ${fl.loops.refusedPerSec.toFixed(0)} refused/s, server CPU ${fl.loops.cpuPerSecond.toFixed(2)} s/s (answers ${Object.entries(fl.loops.codes).map(([c, n]) => `${c}: ${n}`).join(', ')})`,
        `noisy flood on ${FLOOD_CONNECTIONS} connections: ${fl.flood.refusedPerSec.toFixed(0)} refused/s, server CPU ${fl.flood.cpuPerSecond.toFixed(2)} s/s = ${((fl.flood.cpuPerSecond / Math.max(1, fl.flood.refusedPerSec)) * 1e6).toFixed(0)} us per refused request, ${fl.flood.refusedPerSec - fl.loops.refusedPerSec > 100 ? fl.cpuPerRefusedUs.toFixed(0) : 'n/a'} us counting only what the flood adds over the 4 loops (answers ${Object.entries(fl.flood.codes).map(([c, n]) => `${c}: ${n}`).join(', ')})`,
      );
    }
    if (runs('memory')) {
      progress(`opening ${IDLE_WATCHES} idle watches`);
      const mem = await idleWatchMemory(base, server.pid!);
      progress(`opening ${IDLE_WATCHES} idle watches as HTTP/2 streams, ${H2_STREAMS_PER_SESSION} per connection, on a fresh replica`);
      const h2mem = await onFreshReplica(serverEnv, apiPort + 2, (b, pid) => idleH2WatchMemory(b, pid));
      lines.push(
        `memory per idle watch, one TLS connection each: ${mem.perWatchKiB.toFixed(1)} KiB (${IDLE_WATCHES} watches; RSS ${mem.beforeMiB.toFixed(1)} -> ${mem.afterMiB.toFixed(1)} MiB; goal <= 16 KiB)`,
        `memory per idle watch, HTTP/2 streams (${H2_STREAMS_PER_SESSION} per connection): ${h2mem.perWatchKiB.toFixed(1)} KiB (${IDLE_WATCHES} watches over ${h2mem.sessions} connections; RSS ${h2mem.beforeMiB.toFixed(1)} -> ${h2mem.afterMiB.toFixed(1)} MiB; goal <= 16 KiB)`,
      );
    }
    if (runs('lists')) {
      progress(`creating ${LIST_OBJECTS} custom resources of ${LIST_OBJECT_KIB} KiB`);
      await installLargeObjects(base);
      progress(`${PARALLEL_LISTS} parallel unpaginated lists of them`);
      const lists = await parallelListMemory(base, server);
      progress(`the same on a second replica with its heap capped at ${CAPPED_HEAP_MIB} MiB`);
      const capped = await cappedListMemory(serverEnv, apiPort + 1);
      lines.push(listLine('default heap limit', lists), listLine(`heap capped at ${CAPPED_HEAP_MIB} MiB`, capped));
    }
    if (runs('recovery')) {
      progress('killing and restarting PostgreSQL');
      const rec = await recoveryAfterRestart(db, base, async () => {
        db = await startEmbeddedPostgres({ dataDir: decodeURIComponent(dataDir ?? '').replace(/\/run$/, ''), port: pgPort, database: 'plinth', extraFlags: ['-c', 'shared_buffers=256MB'] });
        return db;
      });
      lines.push(`PostgreSQL killed: restart took ${rec.restartMs} ms; the replica served a write ${rec.serveAgainMs} ms after PostgreSQL was back`);
    }
    console.log(lines.join('\n'));
  } finally {
    await stopServerAndDatabase(server, db);
  }
});
