import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { Logger } from 'pino';
import { migrateToLatest } from '@plinth/storage';
import { buildServices, createApp } from './app.factory.js';
import { loadTokenFile } from './authn/authentication.factory.js';
import { loadJwtAuthenticators } from './authn/jwt-issuers.factory.js';
import { ServiceAccountTokens } from './authn/service-account-tokens.js';
import { type HealthListener, startHealthListener } from './health-listener.js';
import { loadOrCreatePki, type ServingPki } from './pki/pki-store.js';
import type { AppConfig } from './config/app-config.js';
import { type EmbeddedDatabase, startEmbeddedPostgres } from '@plinth/storage';
import type { PlinthServices } from './plinth-services.js';

/** A running Plinth server. */
export interface RunningServer {
  app: NestFastifyApplication;
  services: PlinthServices;
  /** `https://host:port`. */
  url: string;
  port: number;
  /** The CA, serving and administrator certificates and the ServiceAccount key in use. */
  pki: ServingPki;
  /** `http://127.0.0.1:port` of the plain health listener, when one was asked for. */
  healthUrl?: string;
  stop(): Promise<void>;
  /**
   * Graceful shutdown (SIGTERM): /readyz fails at once, requests are served
   * for PLINTH_SHUTDOWN_DELAY_SECONDS, then new ones get 503, watches end
   * cleanly, in-flight requests finish (up to PLINTH_SHUTDOWN_TIMEOUT_SECONDS),
   * and everything is closed. Resolves when the process may exit.
   */
  shutdown(): Promise<void>;
}

/** The names the generated serving certificate must cover besides localhost, loopback and the host name. */
function servingNames(config: AppConfig): string[] {
  const host = config.host === '0.0.0.0' || config.host === '::' ? [] : [config.host];
  return [...host, ...config.tls.extraNames];
}

/**
 * Starts Plinth: the PKI (generated into the data folder on first start),
 * the embedded PostgreSQL when no DATABASE_URL is set, the migrations, the
 * configured tenants, then the HTTPS server (and the plain health listener
 * if asked for). Resolves once it listens. `stop()` closes everything it started.
 */
export async function startServer(config: AppConfig, logger: Logger): Promise<RunningServer> {
  const pki = await loadOrCreatePki(config.dataDir, servingNames(config), {
    tlsCertFile: config.tls.certFile,
    tlsKeyFile: config.tls.keyFile,
    clientCaFile: config.tls.clientCaFile,
    serviceAccountKeyFile: config.serviceAccountKeyFile,
  });
  const prepared = {
    serviceAccountTokens: await ServiceAccountTokens.create(pki.serviceAccountKeyPem, config.serviceAccountIssuer),
    tokenFile: loadTokenFile(config),
    jwtIssuers: await loadJwtAuthenticators(config, logger),
  };
  let embedded: EmbeddedDatabase | undefined;
  let databaseUrl = config.databaseUrl;
  if (!databaseUrl) {
    logger.info({ dataDir: config.dataDir, port: config.embeddedPgPort }, 'starting embedded PostgreSQL');
    embedded = await startEmbeddedPostgres({
      dataDir: config.dataDir,
      port: config.embeddedPgPort,
      onLog: (m) => logger.debug({ postgres: m.trim() }, 'postgres'),
    });
    databaseUrl = embedded.url;
  }
  const services = buildServices(config, databaseUrl, logger, prepared);
  let health: HealthListener | undefined;
  try {
    const applied = await migrateToLatest(services.db);
    logger.info({ applied }, 'migrations up to date');
    logger.info({ modules: services.admission.names() }, 'admission chain');
    await services.watch.start();
    await services.flowLimits.load();
    services.crds.start();
    services.quotas.start();
    services.gc.start();
    services.namespaces.start();
    const app = await createApp(services, pki);
    await app.listen(config.port, config.host);
    const address = app.getHttpServer().address();
    const port = typeof address === 'object' && address ? address.port : config.port;
    const url = `https://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;
    // Tenants are objects now: the platform tenant and PLINTH_TENANTS get Tenant objects, provisioned before we report ready.
    services.tenancy.lifecycle.setBaseUrl(url);
    await services.tenancy.lifecycle.start(config.tenants);
    if (config.healthPort !== undefined) health = await startHealthListener(services, config.healthPort);
    // New tenants get the default RBAC policy when provisioned; existing ones are reconciled (missing defaults added) in the background.
    services.authz.reconcileAllTenants(() => services.tenants.list());
    logger.info({ url, health: health?.url }, 'Plinth is serving');
    return {
      app,
      services,
      url,
      port,
      shutdown: () =>
        services.shutdown.run({
          delayMs: config.shutdownDelaySeconds * 1000,
          timeoutMs: config.shutdownTimeoutSeconds * 1000,
          endWatches: () => services.watch.stop(),
          closeHttp: () => app.close(),
          closeRest: async () => {
            await health?.close();
            await services.tenancy.lifecycle.stop();
            await services.crds.stop();
            await services.quotas.stop();
            await services.gc.stop();
            await services.namespaces.stop();
            await services.authz.stop();
            await services.db.destroy();
            await embedded?.stop();
          },
          log: (message, fields) => logger.info(fields ?? {}, message),
        }),
      pki,
      healthUrl: health?.url,
      stop: async () => {
        await health?.close();
        await services.tenancy.lifecycle.stop();
        await services.crds.stop();
        await services.quotas.stop();
        await services.gc.stop();
        await services.namespaces.stop();
        await services.authz.stop();
        await services.watch.stop();
        await app.close();
        await services.db.destroy();
        await embedded?.stop();
      },
    };
  } catch (err) {
    await health?.close();
    await services.tenancy.lifecycle.stop();
    await services.crds.stop();
    await services.quotas.stop();
    await services.gc.stop();
    await services.namespaces.stop();
    await services.authz.stop();
    await services.watch.stop();
    await services.db.destroy();
    await embedded?.stop();
    throw err;
  }
}
