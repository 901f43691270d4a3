import { type ChildProcess, spawn } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sharedTestDataDir, useCredentialsOf } from '../../support/credentials.js';
import { freePort } from '../../watch/support/cluster.js';
import { eventually } from '../../support/eventually.js';

/** A Plinth server in a child process (`node dist/apps/api/src/main.js`), so it can crash, be killed or get SIGTERM. */
export class ReplicaProcess {
  /** The last 20 kB the process wrote (its warnings and errors as JSON logs, and any crash). */
  output = '';
  readonly exited: Promise<number | null>;

  private constructor(
    readonly url: string,
    readonly proc: ChildProcess,
    private readonly dataDir: string,
  ) {
    this.exited = new Promise((resolve) => proc.once('exit', (code) => resolve(code)));
    for (const stream of [proc.stdout, proc.stderr]) {
      stream?.setEncoding('utf8');
      stream?.on('data', (d: string) => {
        this.output = (this.output + d).slice(-20_000);
      });
    }
  }

  /**
   * Starts one and waits until its /readyz answers 200. `env` is added to the server's environment.
   * With more than one worker (PLINTH_WORKERS unset: one per CPU) /readyz says 200 only once every
   * worker serves, and the primary starts the others only after the first serves: each loads the
   * whole application (tens of seconds on a loaded machine), so the wait is 90 s rather than 30 s.
   */
  static async start(env: Record<string, string>): Promise<ReplicaProcess> {
    const port = await freePort();
    const dataDir = mkdtempSync(path.join(process.env.PLINTH_TEST_TMP ?? os.tmpdir(), 'replica-'));
    // Every replica gets a copy of the test file's PKI: one CA and ServiceAccount key, and the
    // administrator certificate that `fetch` presents (installed as the default credentials).
    await useCredentialsOf(sharedTestDataDir());
    cpSync(path.join(sharedTestDataDir(), 'pki'), path.join(dataDir, 'pki'), { recursive: true });
    const proc = spawn(process.execPath, [path.resolve('dist/apps/api/src/main.js')], {
      env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', PLINTH_DATA_DIR: dataDir, PLINTH_DB_POOL_SIZE: '5', LOG_LEVEL: 'warn', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const reap = () => proc.kill('SIGKILL');
    process.once('exit', reap);
    proc.once('exit', () => process.removeListener('exit', reap));
    const r = new ReplicaProcess(`https://127.0.0.1:${port}`, proc, dataDir);
    try {
      const oneWorker = (env.PLINTH_WORKERS ?? process.env.PLINTH_WORKERS) === '1';
      await eventually(() => r.ready(), { timeoutMs: oneWorker ? 30_000 : 90_000, message: `replica on ${port} ready` });
    } catch (err) {
      const verbose = await fetch(`${r.url}/readyz?verbose`, { signal: AbortSignal.timeout(5000) }).then(async (res) => `${res.status} ${await res.text()}`, (e: Error) => e.message);
      await r.kill();
      throw new Error(`${(err as Error).message}; /readyz?verbose: ${verbose}; its output:\n${r.output}`);
    }
    return r;
  }

  /** True while the process runs. */
  get alive(): boolean {
    return this.proc.exitCode === null && this.proc.signalCode === null;
  }

  /** True when /readyz answers 200. */
  async ready(): Promise<boolean> {
    return (await this.readyzStatus()) === 200;
  }

  /** The status of /readyz, 0 when the request fails. */
  async readyzStatus(): Promise<number> {
    try {
      const res = await fetch(`${this.url}/readyz`, { signal: AbortSignal.timeout(5000) });
      await res.arrayBuffer();
      return res.status;
    } catch {
      return 0;
    }
  }

  /** Kills it (SIGKILL unless told otherwise) and waits for the exit; removes its data folder. */
  async kill(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    if (this.alive) this.proc.kill(signal);
    await this.exited;
    rmSync(this.dataDir, { recursive: true, force: true });
  }
}
