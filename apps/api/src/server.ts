import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { Logger } from 'pino';
import { migrateToLatest } from '@plinth/storage';
import { buildServices, createApp } from './app.factory.js';
import type { AppConfig } from './config/app-config.js';
import { type EmbeddedDatabase, startEmbeddedPostgres } from '@plinth/storage';
import type { PlinthServices } from './plinth-services.js';

/** A running Plinth server. */
export interface RunningServer {
  app: NestFastifyApplication;
  services: PlinthServices;
  /** `http://host:port`. */
  url: string;
  port: number;
  stop(): Promise<void>;
  /**
   * Graceful shutdown (SIGTERM): /readyz fails at once, requests are served
   * for PLINTH_SHUTDOWN_DELAY_SECONDS, then new ones get 503, watches end
   * cleanly, in-flight requests finish (up to PLINTH_SHUTDOWN_TIMEOUT_SECONDS),
   * and everything is closed. Resolves when the process may exit.
   */
  shutdown(): Promise<void>;
}

/**
 * Starts Plinth: the embedded PostgreSQL when no DATABASE_URL is set, the
 * migrations, the configured tenants, then the HTTP server. Resolves once it
 * listens. `stop()` closes everything it started.
 */
export async function startServer(config: AppConfig, logger: Logger): Promise<RunningServer> {
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
  const services = buildServices(config, databaseUrl, logger);
  try {
    const applied = await migrateToLatest(services.db);
    logger.info({ applied }, 'migrations up to date');
    logger.info({ modules: services.admission.names() }, 'admission chain');
    await services.watch.start();
    services.crds.start();
    const app = await createApp(services);
    await app.listen(config.port, config.host);
    const address = app.getHttpServer().address();
    const port = typeof address === 'object' && address ? address.port : config.port;
    const url = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;
    // Tenants are objects now: the platform tenant and PLINTH_TENANTS get Tenant objects, provisioned before we report ready.
    services.tenancy.lifecycle.setBaseUrl(url);
    await services.tenancy.lifecycle.start(config.tenants);
    logger.info({ url }, 'Plinth is serving');
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
            await services.tenancy.lifecycle.stop();
            await services.crds.stop();
            await services.db.destroy();
            await embedded?.stop();
          },
          log: (message, fields) => logger.info(fields ?? {}, message),
        }),
      stop: async () => {
        await services.tenancy.lifecycle.stop();
        await services.crds.stop();
        await services.watch.stop();
        await app.close();
        await services.db.destroy();
        await embedded?.stop();
      },
    };
  } catch (err) {
    await services.tenancy.lifecycle.stop();
    await services.crds.stop();
    await services.watch.stop();
    await services.db.destroy();
    await embedded?.stop();
    throw err;
  }
}

/** Writes a kubeconfig for `url` (one context per tenant), returning its path. */
export async function writeKubeconfig(dataDir: string, url: string, tenants: string[]): Promise<string> {
  const file = path.resolve(dataDir, 'kubeconfig');
  await mkdir(path.dirname(file), { recursive: true });
  const all = ['default', ...tenants.filter((t) => t !== 'default')];
  const clusters = all.map((t) => `- name: plinth-${t}\n  cluster:\n    server: ${t === 'default' ? url : `${url}/clusters/${t}`}`);
  const contexts = all.map((t) => `- name: plinth-${t}\n  context:\n    cluster: plinth-${t}\n    user: plinth`);
  const text = [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    ...clusters,
    'contexts:',
    ...contexts,
    'current-context: plinth-default',
    'users:',
    '- name: plinth',
    '  user: {}',
    '',
  ].join('\n');
  await writeFile(file, text);
  return file;
}
