import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import type { Logger } from 'pino';
import { AppModule } from './app.module.js';
import type { AppConfig } from '../config/app-config.js';
import { withoutDiscoverySlash } from '../discovery/discovery-paths.js';
import { HealthListener } from '../health/health-listener.js';
import { advertisedUrl } from '../config/advertise-url-config.js';
import { subjectAltNames } from '../pki/certificate-authority.js';
import { MAX_BODY_BYTES } from '../http/http-limits.js';
import { clientErrorStatus, frameworkErrorStatus } from '../http/request-guards.js';
import { PostStartHooks } from '../lifecycle/post-start-hooks.js';
import { ShutdownSequence } from '../lifecycle/shutdown-sequence.js';
import { PinoNestLogger } from '../observability/logger.js';
import { loadOrCreatePki, type ServingPki } from '../pki/pki-store.js';

/** A running Plinth server; its services are `app.get(...)`. */
export interface RunningServer {
  app: NestFastifyApplication;
  /** `https://host:port`. */
  url: string;
  port: number;
  /** The CA, serving and administrator certificates and the ServiceAccount key in use. */
  pki: ServingPki;
  /** `http://127.0.0.1:port` of the plain health listener, when one was asked for. */
  healthUrl?: string;
  /** Closes the application at once: watches end, the listener closes, every module stops, the database last. */
  stop(): Promise<void>;
  /**
   * Graceful shutdown (what SIGTERM does): /readyz fails at once, requests
   * are served for PLINTH_SHUTDOWN_DELAY_SECONDS, then new ones get 503,
   * watches end cleanly, in-flight requests finish (up to
   * PLINTH_SHUTDOWN_TIMEOUT_SECONDS), and every module stops. Resolves when
   * the process may exit.
   */
  shutdown(): Promise<void>;
}

/** Options of {@link startServer}. */
export interface StartOptions {
  /** Let Nest handle SIGTERM and SIGINT (graceful shutdown, then exit): the process's own server only. */
  handleSignals?: boolean;
}

/** The names the generated serving certificate must cover besides localhost, loopback and the host name. */
function servingNames(config: AppConfig): string[] {
  const host = config.host === '0.0.0.0' || config.host === '::' ? [] : [config.host];
  return [...host, ...config.tls.extraNames];
}

/**
 * Fastify over HTTPS: HTTP/2 by ALPN with HTTP/1.1 fallback, TLS 1.2+,
 * client certificates requested and verified against the client CA but not
 * required; bodies up to 3 MiB; Fastify's own errors answered as Status;
 * discovery paths with a trailing slash served as without it.
 * HTTP/2 clients may open `maxStreams` concurrent streams per connection
 * (advertised in SETTINGS_MAX_CONCURRENT_STREAMS; kube-apiserver's
 * --http2-max-streams-per-connection, default 100): Node's own default is
 * unlimited, which let one connection carry any number of requests.
 */
function httpsAdapter(pki: ServingPki, maxStreams: number): FastifyAdapter {
  return new FastifyAdapter({
    http2: true,
    https: {
      allowHTTP1: true,
      key: pki.serving.keyPem,
      cert: pki.serving.certPem,
      ca: pki.clientCaPem,
      requestCert: true,
      rejectUnauthorized: false,
      minVersion: 'TLSv1.2',
      settings: { maxConcurrentStreams: maxStreams },
    },
    bodyLimit: MAX_BODY_BYTES,
    routerOptions: { maxParamLength: 1000 },
    // `/api/`, `/apis/{g}/`…: the discovery documents, as upstream serves them with a trailing slash.
    rewriteUrl: (req: { url?: string }) => withoutDiscoverySlash(req.url ?? '/'),
    clientErrorHandler: clientErrorStatus,
    frameworkErrors: frameworkErrorStatus,
    // Requests that arrive while draining get a Status from GracefulShutdown, not Fastify's JSON.
    return503OnClosing: false,
  });
}

function serverUrl(host: string, port: number): string {
  return `https://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/**
 * Starts Plinth: the PKI (generated into the data folder on first start),
 * then the Nest application (its modules connect to PostgreSQL, embedded
 * when no DATABASE_URL is set, migrate, and start the change stream and
 * the controllers), then listens and runs the post-start hooks (tenants
 * provisioned, the plain health listener). Resolves once it serves.
 */
export async function startServer(config: AppConfig, logger: Logger, options: StartOptions = {}): Promise<RunningServer> {
  const pki = await loadOrCreatePki(config.dataDir, servingNames(config), {
    tlsCertFile: config.tls.certFile,
    tlsKeyFile: config.tls.keyFile,
    clientCaFile: config.tls.clientCaFile,
    rootCaFile: config.tls.rootCaFile,
    serviceAccountKeyFile: config.serviceAccountKeyFile,
  });
  const app = await NestFactory.create<NestFastifyApplication>(AppModule.forRoot(config, pki, logger), httpsAdapter(pki, config.http2MaxStreamsPerConnection), {
    bodyParser: false,
    logger: new PinoNestLogger(logger),
    abortOnError: false,
  });
  if (options.handleSignals) app.enableShutdownHooks(['SIGTERM', 'SIGINT'], { useProcessExit: true });
  try {
    await app.listen(config.port, config.host);
    const address = app.getHttpServer().address();
    const port = typeof address === 'object' && address ? address.port : config.port;
    const url = serverUrl(config.host, port);
    // What clients are told (Tenants' status.url): never the unspecified address Plinth may listen on.
    const advertised = advertisedUrl(config.advertiseUrl, config.host, port, subjectAltNames(pki.serving.certPem));
    const postStart = app.get(PostStartHooks);
    logger.info({ hooks: postStart.names() }, 'running post-start hooks');
    await postStart.run(advertised);
    const healthUrl = app.get(HealthListener).url;
    logger.info({ url, advertised, health: healthUrl }, 'Plinth is serving');
    return {
      app,
      url,
      port,
      pki,
      healthUrl,
      stop: () => app.close(),
      shutdown: async () => {
        app.get(ShutdownSequence).requestGraceful();
        await app.close();
      },
    };
  } catch (err) {
    await app.close();
    throw err;
  }
}
