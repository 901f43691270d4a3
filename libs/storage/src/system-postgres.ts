import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { chown, mkdir, rm, stat, writeFile } from 'node:fs/promises';
import { userInfo } from 'node:os';
import path from 'node:path';
import { type EmbeddedDatabase, type EmbeddedPostgresOptions, ensureDatabase } from './postgres-server.js';

/**
 * The `postgres` system user's ids when this process runs as root
 * (PostgreSQL refuses to run as root), created if missing; undefined
 * otherwise (the server runs as this user).
 */
function serverUser(): { uid: number; gid: number } | undefined {
  if (userInfo().uid !== 0) return undefined;
  const ids = () => ({ uid: Number(execFileSync('id', ['-u', 'postgres']).toString()), gid: Number(execFileSync('id', ['-g', 'postgres']).toString()) });
  try {
    return ids();
  } catch {
    execFileSync('useradd', ['--system', '--user-group', 'postgres']);
    return ids();
  }
}

/** Runs `bin` with `args` as `user` to its end; rejects with its output when it fails. */
function run(bin: string, args: string[], user: { uid: number; gid: number } | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, { ...user, env: { LC_MESSAGES: 'C', PATH: process.env.PATH ?? '' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`${path.basename(bin)} exited with ${code}: ${out.trim()}`))));
  });
}

/**
 * Starts an installed PostgreSQL (the `initdb` and `postgres` of
 * `binDir`, e.g. Debian's /usr/lib/postgresql/15/bin) exactly as
 * {@link startEmbeddedPostgres} starts the embedded one: data in
 * `<dataDir>/pgdata` (initialised on first use, UTF8, locale C, superuser
 * `postgres` with the same fixed password), only a Unix socket in
 * `<dataDir>/run` (mode 0700), as the `postgres` system user when run as
 * root. Lets tests and benchmarks run on the PostgreSQL users have.
 */
export async function startSystemPostgres(opts: EmbeddedPostgresOptions & { binDir: string }): Promise<EmbeddedDatabase> {
  const databaseDir = path.resolve(opts.dataDir, 'pgdata');
  const socketDir = path.resolve(opts.dataDir, 'run');
  const log = opts.onLog ?? (() => undefined);
  const user = serverUser();
  await mkdir(socketDir, { recursive: true });
  if (!existsSync(path.join(databaseDir, 'PG_VERSION'))) {
    await mkdir(databaseDir, { recursive: true });
    const pwfile = path.resolve(opts.dataDir, 'pwfile');
    await writeFile(pwfile, 'plinth\n', { mode: 0o600 });
    if (user) {
      await chown(databaseDir, user.uid, user.gid);
      await chown(pwfile, user.uid, user.gid);
    }
    try {
      const initdb = ['--pgdata', databaseDir, '--auth=scram-sha-256', '--username=postgres', `--pwfile=${pwfile}`, '--encoding=UTF8', '--locale=C', '--lc-messages=C'];
      await run(path.join(opts.binDir, 'initdb'), initdb, user);
    } finally {
      await rm(pwfile, { force: true });
    }
  }
  const owner = await stat(databaseDir);
  await chown(socketDir, owner.uid, owner.gid);
  const args = ['-D', databaseDir, '-p', String(opts.port), '-c', 'listen_addresses=', '-c', `unix_socket_directories=${socketDir}`, '-c', 'unix_socket_permissions=0700', '-c', 'max_connections=300', ...(opts.extraFlags ?? [])];
  let proc: ChildProcess | undefined = spawn(path.join(opts.binDir, 'postgres'), args, { ...user, env: { LC_MESSAGES: 'C' }, stdio: ['ignore', 'pipe', 'pipe'] });
  const started = proc;
  // The log pipes are always drained: a full pipe would block every backend that logs.
  started.stdout?.on('data', (d) => log(String(d)));
  await new Promise<void>((resolve, reject) => {
    let early = '';
    started.stderr?.on('data', (d) => {
      const message = String(d);
      log(message);
      early = `${early}${message}`.slice(-2000);
      if (message.includes('database system is ready to accept connections')) resolve();
    });
    started.once('error', reject);
    started.once('exit', (code) => reject(new Error(`${path.join(opts.binDir, 'postgres')} exited with ${code} while starting: ${early.trim()}`)));
  });
  const url = (db: string) => `postgres://postgres:plinth@localhost/${db}?host=${encodeURIComponent(socketDir)}&port=${opts.port}`;
  const database = opts.database ?? 'plinth';
  await ensureDatabase(url('postgres'), database);
  // As the embedded package does: a process that exits without stopping it (an uncaught error) does not leave it running.
  const onExit = () => proc?.kill('SIGINT');
  process.once('exit', onExit);
  const signal = async (sig: NodeJS.Signals) => {
    process.removeListener('exit', onExit);
    const p = proc;
    proc = undefined;
    if (!p || p.exitCode !== null || p.signalCode !== null) return;
    const exited = new Promise((resolve) => p.once('exit', resolve));
    // A crash (SIGKILL) takes the backends with it, as startEmbeddedPostgres's kill does.
    const backends = sig === 'SIGKILL' && p.pid ? childPids(p.pid) : [];
    p.kill(sig);
    for (const pid of backends) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
    }
    await exited;
  };
  // SIGINT: fast shutdown (backends end, then a checkpoint).
  return { url: url(database), adminUrl: url('postgres'), stop: () => signal('SIGINT'), kill: () => signal('SIGKILL') };
}

/** Pids of the direct children of `pid` (Linux /proc); empty where /proc is unavailable. For kills that act as a crash. */
export function childPids(pid: number): number[] {
  const out: number[] = [];
  let entries: string[] = [];
  try {
    entries = readdirSync('/proc').filter((e) => /^\d+$/.test(e));
  } catch {
    return out;
  }
  for (const e of entries) {
    try {
      // The command name (in parentheses) may contain spaces: the ppid is the 2nd field after it.
      const line = readFileSync(`/proc/${e}/stat`, 'utf8');
      const ppid = Number(line.slice(line.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) out.push(Number(e));
    } catch {
      // The process ended meanwhile.
    }
  }
  return out;
}
