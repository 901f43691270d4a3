import { type ChildProcess, spawn } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Agent, fetch as undiciFetch, type RequestInit as UndiciRequestInit } from 'undici';
import { sharedTestDataDir, testPki, useCredentialsOf } from '../../support/credentials.js';
import { eventually } from '../../support/eventually.js';
import { freePort } from '../../watch/support/cluster.js';

/** One worker's /metrics, as a scrape on a connection of its own found it. */
export interface WorkerScrape {
  worker: number;
  pid: number;
  text: string;
}

/** The value of the sample `name{labels}` in a Prometheus text exposition, or undefined. */
export function sample(text: string, name: string, labels = ''): number | undefined {
  const escaped = `${name}${labels ? `{${labels}}` : ''}`.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const m = new RegExp(`^${escaped} (\\S+)$`, 'm').exec(text);
  return m ? Number(m[1]) : undefined;
}

/** `plinth_leader` of each controller in one worker's metrics. */
export function leaders(text: string): Map<string, number> {
  return new Map([...text.matchAll(/^plinth_leader\{controller="([^"]+)"\} (\d+)$/gm)].map((m) => [m[1], Number(m[2])]));
}

/**
 * `fetch` on a connection of its own, closed after the response: the
 * port's scheduler hands each new connection to the next worker, while a
 * pooled one would stay with the worker it reached first.
 */
export async function fetchOnNewConnection(url: string, init: UndiciRequestInit = {}): Promise<{ status: number; text: string }> {
  const pki = testPki();
  const agent = new Agent({ connect: { ca: pki.caPem, cert: pki.admin.certPem, key: pki.admin.keyPem }, pipelining: 0 });
  try {
    const res = await undiciFetch(url, { ...init, signal: AbortSignal.timeout(10_000), dispatcher: agent });
    return { status: res.status, text: await res.text() };
  } finally {
    await agent.destroy();
  }
}

/** True while process `pid` exists. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Plinth started as a user starts it (`node dist/apps/api/src/main.js`)
 * with PLINTH_WORKERS and the embedded PostgreSQL in a data folder of its
 * own (holding a copy of the test file's PKI, so `fetch` is its
 * administrator), for the workers' end-to-end tests.
 */
export class WorkersProcess {
  /** The last 50 kB the processes wrote. */
  output = '';
  readonly exited: Promise<number | null>;

  private constructor(
    readonly url: string,
    readonly proc: ChildProcess,
    readonly dataDir: string,
    private readonly workers: number,
  ) {
    this.exited = new Promise((resolve) => proc.once('exit', (code) => resolve(code)));
    for (const stream of [proc.stdout, proc.stderr]) {
      stream?.setEncoding('utf8');
      stream?.on('data', (d: string) => {
        this.output = (this.output + d).slice(-50_000);
      });
    }
  }

  /**
   * Starts it with `workers` workers and waits until every one serves
   * (distinct pids in /metrics), or, `untilReady`, only until /readyz first
   * answers 200 on a new connection.
   */
  static async start(workers: number, env: Record<string, string> = {}, untilReady = false): Promise<WorkersProcess> {
    const port = await freePort();
    const dataDir = mkdtempSync(path.join(process.env.PLINTH_TEST_TMP ?? os.tmpdir(), 'workers-'));
    // The embedded PostgreSQL runs as the `postgres` user when the tests run as root: it must reach the folder.
    chmodSync(dataDir, 0o755);
    await useCredentialsOf(sharedTestDataDir());
    cpSync(path.join(sharedTestDataDir(), 'pki'), path.join(dataDir, 'pki'), { recursive: true });
    const proc = spawn(process.execPath, [path.resolve('dist/apps/api/src/main.js')], {
      env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', PLINTH_DATA_DIR: dataDir, PLINTH_WORKERS: String(workers), PLINTH_DB_POOL_SIZE: '5', LOG_LEVEL: 'warn', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const reap = () => proc.kill('SIGKILL');
    process.once('exit', reap);
    proc.once('exit', () => process.removeListener('exit', reap));
    const w = new WorkersProcess(`https://127.0.0.1:${port}`, proc, dataDir, workers);
    if (untilReady) {
      await eventually(async () => (await fetchOnNewConnection(`${w.url}/readyz`).catch(() => ({ status: 0 }))).status === 200, {
        timeoutMs: 90_000,
        intervalMs: 100,
        message: '/readyz 200',
      });
      return w;
    }
    await eventually(async () => (await w.scrapeEach()).length === workers, {
      timeoutMs: 90_000,
      intervalMs: 250,
      message: `${workers} workers serving`,
    });
    return w;
  }

  /** /metrics on a new connection (the port's scheduler hands each connection to the next worker); undefined when refused or from a worker still starting. */
  async scrape(): Promise<WorkerScrape | undefined> {
    try {
      const { status, text } = await fetchOnNewConnection(`${this.url}/metrics`);
      if (status !== 200) return undefined;
      const m = /^plinth_worker_info\{worker="(\d+)",pid="(\d+)"\} 1$/m.exec(text);
      // A worker names itself once it has started (post-start hooks run); a process serving alone never does.
      if (this.workers === 1) return { worker: 0, pid: this.proc.pid!, text };
      return m ? { worker: Number(m[1]), pid: Number(m[2]), text } : undefined;
    } catch {
      return undefined;
    }
  }

  /** One scrape of each worker that answers, found over up to a dozen connections; by pid. */
  async scrapeEach(): Promise<WorkerScrape[]> {
    const found = new Map<number, WorkerScrape>();
    for (let i = 0; i < 12; i++) {
      const s = await this.scrape();
      if (s && !found.has(s.pid)) found.set(s.pid, s);
    }
    return [...found.values()];
  }

  /** The pid of the embedded PostgreSQL's postmaster (first line of postmaster.pid), or undefined when it is stopped. */
  postmasterPid(): number | undefined {
    const file = path.join(this.dataDir, 'pgdata', 'postmaster.pid');
    return existsSync(file) ? Number(readFileSync(file, 'utf8').split('\n')[0]) : undefined;
  }

  /** True while the primary runs. */
  get alive(): boolean {
    return this.proc.exitCode === null && this.proc.signalCode === null;
  }

  /** Kills the primary and its workers (SIGKILL) unless they exited, stops a PostgreSQL left running, removes the data folder. */
  async kill(workerPids: number[] = []): Promise<void> {
    if (this.alive) this.proc.kill('SIGKILL');
    await this.exited;
    for (const pid of workerPids) if (isAlive(pid)) process.kill(pid, 'SIGKILL');
    const pg = this.postmasterPid();
    if (pg && isAlive(pg)) process.kill(pg, 'SIGQUIT');
    rmSync(this.dataDir, { recursive: true, force: true });
  }
}
