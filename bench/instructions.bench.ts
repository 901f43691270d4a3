import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { type Agent, request } from 'undici';
import { benchAgent, benchCredentials, progress, runBenchmark, startBenchPostgres, startServerProcess, stopServerAndDatabase } from './bench-support.js';

// Instructions per request, counted by valgrind's callgrind in the server process (all its threads), over a
// fixed number of requests after a warm-up. A count of instructions is the same for the same binary, inputs
// and environment whatever else the machine does, where CPU time per request moved by a factor of 1.6 between
// two runs of one build on this host (docs/benchmarks.md, issue 29, seventh session): the measure for "the
// server's CPU per create halved, back to back" on a shared host. The bare node:https echo server is measured
// the same way in the same run, as the transport's floor.
//
// BENCH_SERVER_ROOT=<checkout> counts another build (its dist/apps/api/src/main.js, built there) with this
// harness and this build's clients; BENCH_REQUESTS (default 600) requests are counted per phase after
// BENCH_WARMUP (default 3000) uncounted requests of the same kind, so that both builds' code is compiled.

const exec = promisify(execFile);
/** Clients at once (BENCH_CLIENTS): few, as the server runs tens of times slower counted, and its 5 s pool and barrier deadlines stay far. */
const CONCURRENCY = Number(process.env.BENCH_CLIENTS ?? 8);
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 600);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 3000);
const ROOT = path.resolve(process.env.BENCH_SERVER_ROOT ?? '.');
const VALUE = 'x'.repeat(1024 - 120);
/** Callgrind with nothing counted until asked (callgrind_control -i on): startup and warm-up run uninstrumented. */
const CALLGRIND = ['--tool=callgrind', '--instr-atstart=no', '--dump-instr=no', '--collect-jumps=no'];

function configMap(name: string): string {
  return JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'bench' }, data: { v: VALUE } });
}

/** Runs `n` requests `send(i)` on `concurrency` loops; resolves when all have answered. Throws the first failure. */
async function runCount(n: number, concurrency: number, send: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < n) await send(next++);
    }),
  );
}

/** A callgrind run's output files and how to count one phase of it. */
class InstructionCounter {
  constructor(
    readonly outFile: string,
    private readonly pid: number,
  ) {}

  /** The callgrind options for a process whose counts go to this counter's file. */
  static options(outFile: string): string[] {
    return [...CALLGRIND, `--callgrind-out-file=${outFile}`];
  }

  /** Instructions the process executes while `phase` runs (zeroed before, dumped after; counting on only meanwhile, and for the dump). */
  async during(phase: () => Promise<void>): Promise<number> {
    await this.control('--zero');
    await this.control('--instr=on');
    await phase();
    const before = new Set(this.dumps());
    // Dumped while counting is still on (callgrind writes no dump with instrumentation off), then off.
    await this.control('--dump');
    await this.control('--instr=off');
    const dump = this.dumps().find((f) => !before.has(f));
    if (!dump) throw new Error(`callgrind wrote no dump for ${this.pid}`);
    return totalInstructions(readFileSync(dump, 'utf8'));
  }

  private async control(arg: string): Promise<void> {
    // vgdb names its pipes after $HOST as the process saw it: the server's HOST is its listen address, the bare server's is set to match.
    await exec('callgrind_control', [arg, String(this.pid)], { env: { ...process.env, HOST: '127.0.0.1' } });
  }

  private dumps(): string[] {
    const dir = path.dirname(this.outFile);
    const base = path.basename(this.outFile);
    return readdirSync(dir)
      .filter((f) => f.startsWith(base))
      .map((f) => path.join(dir, f));
  }
}

/** The `totals:` (or `summary:`) line of a callgrind dump: instructions executed (Ir). */
function totalInstructions(dump: string): number {
  const m = /^(?:totals|summary): (\d+)/m.exec(dump);
  if (!m) throw new Error('callgrind dump without totals');
  return Number(m[1]);
}

/** Starts the bare node:https echo server (bench/bare-https-server.ts) under callgrind; resolves with it and its port. */
async function startBareServer(outFile: string): Promise<{ child: ChildProcess; port: number }> {
  const { pki } = await benchCredentials();
  const init = { key: pki.serving.keyPem, cert: pki.serving.certPem, ca: pki.clientCaPem };
  const child = spawn('valgrind', [...InstructionCounter.options(outFile), process.execPath, path.resolve('dist/bench/bare-https-server.js')], {
    // HOST as the API server's, so that callgrind_control finds its vgdb pipes (see InstructionCounter.control).
    env: { ...process.env, HOST: '127.0.0.1', BARE_HTTPS_INIT: JSON.stringify(init) },
    stdio: ['ignore', 'ignore', 'ignore', 'ipc'],
  });
  const port = await new Promise<number>((resolve, reject) => {
    child.once('message', (m) => resolve((m as { port: number }).port));
    child.once('exit', (code) => reject(new Error(`the bare HTTPS server exited (${code})`)));
  });
  return { child, port };
}

/** POSTs the benchmark's ConfigMap `i` to `url`; throws unless the answer is 201. */
async function post(agent: Agent, url: string, i: number, prefix: string): Promise<void> {
  const res = await request(url, { method: 'POST', body: configMap(`${prefix}-${i}`), headers: { 'content-type': 'application/json' }, dispatcher: agent });
  const text = await res.body.text();
  if (res.statusCode !== 201) throw new Error(`POST ${url}: ${res.statusCode} ${text.slice(0, 200)}`);
}

/** GETs `url`; throws unless the answer is 200. */
async function get(agent: Agent, url: string): Promise<void> {
  const res = await request(url, { dispatcher: agent });
  const text = await res.body.text();
  if (res.statusCode !== 200) throw new Error(`GET ${url}: ${res.statusCode} ${text.slice(0, 200)}`);
}

interface Counts {
  create: number;
  get: number;
  bare: number;
}

/** The API server's instructions per create and per get, then the bare server's per POST. */
async function measure(outDir: string): Promise<Counts> {
  const pgPort = 57100 + (process.pid % 400);
  const apiPort = 18100 + (process.pid % 400);
  const db = await startBenchPostgres('instructions', pgPort);
  progress(`starting the server of ${ROOT} under callgrind (uninstrumented until counted)`);
  const outFile = path.join(outDir, 'api.callgrind');
  // One process (the counts are of its threads), and a fixed replica-wide limit: the adaptive one reads the loop's delay, which valgrind inflates.
  const env = { DATABASE_URL: db.url, PLINTH_DB_POOL_SIZE: '32', PLINTH_WORKERS: '1', PLINTH_ADAPTIVE_CONCURRENCY: 'off' };
  const server = await startServerProcess(env, apiPort, { wrapper: ['valgrind', ...InstructionCounter.options(outFile)], root: ROOT, readyTimeoutMs: 600_000 });
  const agent = await benchAgent({ connections: CONCURRENCY, pipelining: 1, keepAliveTimeout: 600_000 });
  const base = `https://127.0.0.1:${apiPort}`;
  try {
    const counter = new InstructionCounter(outFile, server.pid!);
    const nsRes = await request(`${base}/api/v1/namespaces`, { method: 'POST', body: JSON.stringify({ metadata: { name: 'bench' } }), headers: { 'content-type': 'application/json' }, dispatcher: agent });
    await nsRes.body.text();
    const creates = `${base}/api/v1/namespaces/bench/configmaps`;
    progress(`warm-up: ${WARMUP} creates, uncounted`);
    await runCount(WARMUP, CONCURRENCY, (i) => post(agent, creates, i, 'warm'));
    progress(`counting ${REQUESTS} creates (${CONCURRENCY} clients)`);
    const create = await counter.during(() => runCount(REQUESTS, CONCURRENCY, (i) => post(agent, creates, i, 'cm')));
    progress(`warm-up: ${WARMUP} gets, uncounted`);
    await runCount(WARMUP, CONCURRENCY, (i) => get(agent, `${creates}/warm-${i % WARMUP}`));
    progress(`counting ${REQUESTS} gets`);
    const got = await counter.during(() => runCount(REQUESTS, CONCURRENCY, (i) => get(agent, `${creates}/warm-${i % WARMUP}`)));
    await stopServerAndDatabase(server, db);
    progress('the bare node:https echo server under callgrind');
    const bareOut = path.join(outDir, 'bare.callgrind');
    const bare = await startBareServer(bareOut);
    try {
      const bareCounter = new InstructionCounter(bareOut, bare.child.pid!);
      const url = `https://127.0.0.1:${bare.port}/api/v1/namespaces/bench/configmaps`;
      await runCount(WARMUP, CONCURRENCY, (i) => post(agent, url, i, 'warm'));
      const echo = await bareCounter.during(() => runCount(REQUESTS, CONCURRENCY, (i) => post(agent, url, i, 'bare')));
      return { create: create / REQUESTS, get: got / REQUESTS, bare: echo / REQUESTS };
    } finally {
      bare.child.kill('SIGTERM');
    }
  } finally {
    await agent.close();
    if (server.exitCode === null) await stopServerAndDatabase(server, db);
  }
}

async function main(): Promise<void> {
  if (!existsSync(path.join(ROOT, 'dist/apps/api/src/main.js'))) throw new Error(`no built server in ${ROOT} (npm run build there first)`);
  const outDir = path.resolve('.test-tmp', `bench-instructions-${process.pid}`);
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(outDir, { recursive: true });
  const counts = await measure(outDir);
  const k = (n: number) => (n / 1000).toFixed(0).padStart(8);
  console.log(`\ninstructions benchmark (valgrind callgrind, the server's threads; ${cpus().length} cores; load average ${loadavg().map((x) => x.toFixed(2)).join(' ')})`);
  console.log(`server: ${ROOT}; ${REQUESTS} requests counted per phase after ${WARMUP} uncounted ones; ${CONCURRENCY} HTTPS clients, 1 KiB ConfigMaps\n`);
  console.log('request                                   thousand instructions per request');
  console.log(`API create (client certificate)           ${k(counts.create)}`);
  console.log(`API get                                   ${k(counts.get)}`);
  console.log(`bare node:https POST echo, no DB          ${k(counts.bare)}`);
  console.log(`\nAPI create / bare POST = ${(counts.create / counts.bare).toFixed(1)}x; API get / bare POST = ${(counts.get / counts.bare).toFixed(1)}x`);
  rmSync(outDir, { recursive: true, force: true });
}

runBenchmark(main);
