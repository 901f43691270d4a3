import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../../watch/support/cluster.js';

const BIN = '/usr/sbin/pgbouncer';

/** Whether Debian's `pgbouncer` is installed. */
export function pgbouncerInstalled(): boolean {
  return existsSync(BIN);
}

/** PgBouncer's pool modes. */
export type PoolMode = 'session' | 'transaction' | 'statement';

/** The `postgres` system user when running as root (PgBouncer refuses to run as root, and must reach the embedded server's 0700 socket folder). */
function postgresUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres']).toString().trim());
  return { uid: id('-u'), gid: id('-g') };
}

/**
 * A real PgBouncer on a loopback port in front of a PostgreSQL given by its
 * URL (the test runner's, over its Unix socket), with its configuration in
 * a temporary folder: every database of the server, `auth_type = plain`
 * with the server's user and password in its auth file, the given pool mode.
 * Can be stopped and started again on the same port (connections dropped).
 */
export class PgBouncer {
  private proc: ChildProcess | undefined;

  private constructor(
    private readonly dir: string,
    readonly port: number,
    private readonly user: string,
    private readonly password: string,
  ) {}

  /** Writes the configuration for `mode` in front of the server of `serverUrl` and starts PgBouncer. */
  static async start(serverUrl: string, mode: PoolMode): Promise<PgBouncer> {
    const u = new URL(serverUrl);
    const user = decodeURIComponent(u.username);
    const password = decodeURIComponent(u.password);
    // A Unix socket folder in `?host=` (the embedded server), else the URL's host.
    const host = u.searchParams.get('host') ?? u.hostname;
    const serverPort = u.searchParams.get('port') ?? (u.port || '5432');
    const dir = mkdtempSync(path.join(process.env.PLINTH_TEST_TMP ?? os.tmpdir(), `pgbouncer-${mode}-`));
    chmodSync(dir, 0o755);
    const b = new PgBouncer(dir, await freePort(), user, password);
    const ini = [
      '[databases]',
      `* = host=${host} port=${serverPort}`,
      '[pgbouncer]',
      `listen_addr = 127.0.0.1`,
      `listen_port = ${b.port}`,
      `unix_socket_dir =`,
      `auth_type = plain`,
      `auth_file = ${path.join(dir, 'users.txt')}`,
      `pool_mode = ${mode}`,
      `max_client_conn = 500`,
      `default_pool_size = 60`,
      `server_login_retry = 1`,
      `logfile = ${path.join(dir, 'pgbouncer.log')}`,
      `pidfile = ${path.join(dir, 'pgbouncer.pid')}`,
      '',
    ].join('\n');
    writeFileSync(path.join(dir, 'pgbouncer.ini'), ini);
    writeFileSync(path.join(dir, 'users.txt'), `"${user}" "${password.replace(/"/g, '""')}"\n`, { mode: 0o600 });
    const owner = postgresUser();
    if (owner) for (const f of ['pgbouncer.ini', 'users.txt']) chownSync(path.join(dir, f), owner.uid, owner.gid);
    if (owner) chownSync(dir, owner.uid, owner.gid);
    await b.resume();
    return b;
  }

  /** A URL through PgBouncer to `database` (the server's user and password). */
  url(database: string): string {
    return `postgres://${encodeURIComponent(this.user)}:${encodeURIComponent(this.password)}@127.0.0.1:${this.port}/${encodeURIComponent(database)}`;
  }

  /** Starts PgBouncer (again) and waits until it accepts connections. */
  async resume(): Promise<void> {
    if (this.proc) return;
    const log = openSync(path.join(this.dir, 'stderr.log'), 'a');
    const owner = postgresUser();
    this.proc = spawn(BIN, [path.join(this.dir, 'pgbouncer.ini')], { stdio: ['ignore', log, log], cwd: this.dir, ...(owner ?? {}) });
    const deadline = Date.now() + 10_000;
    for (;;) {
      if (this.proc.exitCode !== null) throw new Error(`pgbouncer exited (${this.proc.exitCode}): ${this.log()}`);
      if (await accepts(this.port)) return;
      if (Date.now() > deadline) throw new Error(`pgbouncer does not listen on ${this.port}: ${this.log()}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** Stops PgBouncer at once (SIGKILL): every client and server connection drops. */
  async kill(): Promise<void> {
    const p = this.proc;
    this.proc = undefined;
    if (!p || p.exitCode !== null) return;
    const exited = new Promise((r) => p.once('exit', r));
    p.kill('SIGKILL');
    await exited;
  }

  /** Its log, for failure messages. */
  log(): string {
    const read = (f: string) => (existsSync(path.join(this.dir, f)) ? readFileSync(path.join(this.dir, f), 'utf8') : '');
    return `${read('stderr.log')}${read('pgbouncer.log')}`.split('\n').slice(-20).join('\n');
  }

  /** Stops it and removes its folder. */
  async stop(): Promise<void> {
    await this.kill();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1', () => {
      s.destroy();
      resolve(true);
    });
    s.on('error', () => resolve(false));
  });
}
