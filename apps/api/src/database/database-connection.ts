import type { Logger } from 'pino';
import { createDatabase, type Database, type EmbeddedDatabase, embeddedPostgresUrl, migrateToLatest, startEmbeddedPostgres } from '@plinth/storage';
import type { AppConfig } from '../config/app-config.js';
import { checkSessionPoolingAtStartup } from '../startup/session-pooling-startup.js';
import { embeddedPostgresFailure } from '../startup/startup-failure.js';
import { migrations } from '@plinth/migrations';

/** The server's PostgreSQL: the Kysely pool, the URL it connects to, and the embedded server when Plinth started one. */
export class DatabaseConnection {
  constructor(
    readonly db: Database,
    readonly url: string,
    private readonly embedded: EmbeddedDatabase | undefined,
  ) {}

  /** Closes the pool, then stops the embedded PostgreSQL if there is one. */
  async close(): Promise<void> {
    await this.db.destroy();
    await this.embedded?.stop();
  }
}

/** Injection token of the Kysely {@link Database} (the pool of {@link DatabaseConnection}). */
export const DATABASE = Symbol('DATABASE');

/**
 * Starts the embedded PostgreSQL in the data folder (initialising it on
 * first use) and resolves once it accepts connections. Throws a
 * StartupFailure saying why it would not start (from its log).
 */
export async function startEmbeddedDatabase(config: AppConfig, logger: Logger): Promise<EmbeddedDatabase> {
  logger.info({ dataDir: config.dataDir, port: config.embeddedPgPort }, 'starting embedded PostgreSQL');
  // Its last lines say why it would not start (the package rejects with nothing when PostgreSQL exits).
  const recent: string[] = [];
  try {
    return await startEmbeddedPostgres({
      dataDir: config.dataDir,
      port: config.embeddedPgPort,
      // Every worker of PLINTH_WORKERS has its pool plus a few sessions of its own (LISTEN, elections, probes).
      extraFlags: ['-c', `max_connections=${Math.max(300, config.workers * (config.dbPoolSize + 8) + 20)}`],
      onLog: (m) => {
        recent.push(m.trim());
        if (recent.length > 50) recent.shift();
        logger.debug({ postgres: m.trim() }, 'postgres');
      },
    });
  } catch (err) {
    throw embeddedPostgresFailure(recent, err, config);
  }
}

/**
 * Connects to `DATABASE_URL`, or to the embedded PostgreSQL in the data
 * folder: the one the workers' primary started (config.worker),
 * else one started here. Migrates to the latest schema before anything
 * else is built. An embedded PostgreSQL that will not start throws a
 * StartupFailure saying why (from its log).
 */
export async function connectDatabase(config: AppConfig, logger: Logger): Promise<DatabaseConnection> {
  let embedded: EmbeddedDatabase | undefined;
  let url = config.databaseUrl;
  if (!url && config.worker?.attachEmbeddedPostgres) url = embeddedPostgresUrl(config.dataDir, config.embeddedPgPort);
  if (!url) {
    embedded = await startEmbeddedDatabase(config, logger);
    url = embedded.url;
  }
  const db = createDatabase({
    connectionString: url,
    maxConnections: config.dbPoolSize,
    rowSecurity: config.rowLevelSecurity,
    onPoolError: (err) => logger.warn({ err: err.message }, 'database connection error'),
  });
  const connection = new DatabaseConnection(db, url, embedded);
  try {
    await checkSessionPoolingAtStartup(config, url);
    const applied = await migrateToLatest(db, migrations);
    logger.info({ applied }, 'migrations up to date');
  } catch (err) {
    await connection.close();
    throw err;
  }
  return connection;
}
