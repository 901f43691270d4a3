import pg from 'pg';

/** A running embedded PostgreSQL cluster. */
export interface EmbeddedDatabase {
  /** URL of the `plinth` database (created if missing), over the Unix socket. */
  url: string;
  /** URL of the `postgres` maintenance database, over the Unix socket. */
  adminUrl: string;
  stop(): Promise<void>;
  /**
   * Kills the postmaster and every backend with SIGKILL, as a crash of the
   * machine would (for fault tests): clients see their connections drop
   * mid-query. Resolves once the postmaster exited. `stop()` afterwards
   * does nothing.
   */
  kill(): Promise<void>;
}

/** Options for {@link startEmbeddedPostgres}. */
export interface EmbeddedPostgresOptions {
  dataDir: string;
  /** Names the socket file (`.s.PGSQL.<port>`); nothing listens on this TCP port. */
  port: number;
  database?: string;
  /** Extra server settings, e.g. `['-c', 'fsync=off']` for throw-away test clusters. */
  extraFlags?: string[];
  onLog?: (message: string) => void;
  /**
   * A folder holding an installed PostgreSQL's `initdb` and `postgres`
   * (e.g. /usr/lib/postgresql/15/bin): started instead of the embedded
   * binaries, the same way (see startSystemPostgres).
   */
  binDir?: string;
}

/**
 * Creates database `database` on the server `adminUrl` (its maintenance
 * database) when it does not exist. Idempotent; rejects when the server
 * cannot be reached.
 */
export async function ensureDatabase(adminUrl: string, database: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  client.on('error', () => undefined); // surfaces as the failed query below
  await client.connect();
  try {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
    if (!rowCount) await client.query(`CREATE DATABASE "${database}"`);
  } finally {
    await client.end();
  }
}
