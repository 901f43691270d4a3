import { execFile, execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { connectSession } from '@plinth/storage';
import { eventually } from '../../support/eventually.js';
import { freePort } from '../../watch/support/cluster.js';

const run = promisify(execFile);
/** Debian's PostgreSQL 15 (the embedded binaries have no pg_basebackup). */
const PG_BIN = '/usr/lib/postgresql/15/bin';

/** Why the streaming-standby tests cannot run here, or false. */
export const skipStreaming = existsSync(`${PG_BIN}/pg_basebackup`) ? false : 'needs the Debian package postgresql-15 (pg_basebackup)';

/** The `postgres` system user when running as root (PostgreSQL refuses to run as root). */
function postgresUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres']).toString().trim());
  return { uid: id('-u'), gid: id('-g') };
}

/**
 * A PostgreSQL 15 primary and one hot standby streaming from it
 * (pg_basebackup -R), on loopback ports in a temporary folder, with trust
 * authentication: the smallest real topology a read replica needs.
 */
export class StreamingPair {
  private constructor(
    readonly dir: string,
    readonly primaryPort: number,
    readonly standbyPort: number,
  ) {}

  /** Starts both and creates `database` on the primary; resolves once the standby has replayed it. */
  static async start(database: string): Promise<StreamingPair> {
    const dir = mkdtempSync('/tmp/plinth-standby-');
    const owner = postgresUser();
    if (owner) chownSync(dir, owner.uid, owner.gid);
    const pair = new StreamingPair(dir, await freePort(), await freePort());
    process.once('exit', () => pair.killAll());
    try {
      await pair.pg('initdb', ['-D', pair.data('primary'), '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync']);
      await pair.startServer('primary');
      await pair.pg('pg_basebackup', ['-h', '127.0.0.1', '-p', String(pair.primaryPort), '-U', 'postgres', '-D', pair.data('standby'), '-R', '-X', 'stream', '--no-sync']);
      await pair.startServer('standby');
      const admin = await connectSession(pair.url('primary', 'postgres'));
      await admin.query(`CREATE DATABASE ${database}`);
      await admin.end();
      await eventually(async () => {
        const s = await connectSession(pair.url('standby', database)).catch(() => undefined);
        await s?.end();
        return s !== undefined;
      }, { timeoutMs: 20_000, message: 'the standby replayed the new database' });
    } catch (err) {
      await pair.stop();
      throw err;
    }
    return pair;
  }

  private data(which: 'primary' | 'standby'): string {
    return path.join(this.dir, which);
  }

  private async pg(tool: string, args: string[]): Promise<string> {
    const owner = postgresUser();
    const { stdout } = await run(`${PG_BIN}/${tool}`, args, { uid: owner?.uid, gid: owner?.gid, cwd: this.dir });
    return stdout;
  }

  /** URL of `database` on one server. */
  url(which: 'primary' | 'standby', database: string): string {
    return `postgres://postgres@127.0.0.1:${which === 'primary' ? this.primaryPort : this.standbyPort}/${database}`;
  }

  /** Starts one server (pg_ctl -w). */
  async startServer(which: 'primary' | 'standby'): Promise<void> {
    const port = which === 'primary' ? this.primaryPort : this.standbyPort;
    const opts = `-p ${port} -k ${this.dir} -c listen_addresses=127.0.0.1 -c fsync=off -c wal_level=replica -c max_wal_senders=5 -c hot_standby=on -c max_connections=100`;
    await this.pg('pg_ctl', ['-D', this.data(which), '-o', opts, '-l', path.join(this.dir, `${which}.log`), '-w', '-t', '60', 'start']);
  }

  /** Stops one server at once (`-m immediate`: as a crash, sessions cut). */
  async stopServer(which: 'primary' | 'standby'): Promise<void> {
    await this.pg('pg_ctl', ['-D', this.data(which), '-m', 'immediate', '-w', 'stop']).catch(() => undefined);
  }

  /** Runs one statement on the standby's `database` as the superuser. */
  async onStandby(database: string, statement: string): Promise<unknown[]> {
    const s = await connectSession(this.url('standby', database));
    try {
      return (await s.query(statement)).rows;
    } finally {
      await s.end();
    }
  }

  /** The postmaster's pid of one server (undefined when it does not run). */
  postmasterPid(which: 'primary' | 'standby'): number | undefined {
    try {
      return Number(readFileSync(path.join(this.data(which), 'postmaster.pid'), 'utf8').split('\n')[0]) || undefined;
    } catch {
      return undefined;
    }
  }

  private killAll(): void {
    for (const which of ['primary', 'standby'] as const) {
      try {
        const pid = this.postmasterPid(which);
        if (pid) process.kill(pid, 'SIGKILL');
      } catch {
        // Not running.
      }
    }
  }

  /** Stops both servers and removes the folder (never throws). */
  async stop(): Promise<void> {
    await this.stopServer('standby');
    await this.stopServer('primary');
    rmSync(this.dir, { recursive: true, force: true });
  }
}
