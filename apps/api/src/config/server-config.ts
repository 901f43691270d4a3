import { readAdvertiseUrl } from './advertise-url-config.js';
import type { EnvironmentVariables } from './environment-variables.dto.js';
import { type WorkersReason, workersForThisHost } from './worker-count.js';

/** The server process's part of AppConfig: where it listens, how many processes serve, how it logs, times out and shuts down. */
export interface ServerConfig {
  port: number;
  host: string;
  logLevel: string;
  /** On SIGTERM, /readyz fails this long while requests are still served (load balancers notice). */
  shutdownDelaySeconds: number;
  /** Then in-flight requests get at most this long to finish. */
  shutdownTimeoutSeconds: number;
  /** A request other than a watch not answered this long after it arrived (body upload included) gets 504 (kube-apiserver's --request-timeout). */
  requestTimeoutSeconds: number;
  /** Worker threads that evaluate custom resources' CEL rules (each tenant may use half of them at once). */
  celWorkers: number;
  /** Server processes on this host sharing the port (PLINTH_WORKERS; default: the CPUs Node may use, less one beside a local PostgreSQL). 1: no fork. */
  workers: number;
  /** Why `workers` is what it is (logged at start-up). */
  workersReason: WorkersReason;
  /**
   * Set by main.ts in each worker process of PLINTH_WORKERS > 1, never from the environment; undefined in a
   * process that serves alone. `attachEmbeddedPostgres`: the primary runs the embedded PostgreSQL, so connect to
   * its socket rather than start it.
   */
  worker?: { id: number; attachEmbeddedPostgres: boolean };
  /** Port of the plain-HTTP health/metrics listener on 127.0.0.1; undefined: none. */
  healthPort?: number;
  /** PLINTH_ADVERTISE_URL, validated (`https://host[:port]`): the URL clients are told (Tenants' status.url); undefined: derived (see advertisedUrl). */
  advertiseUrl?: string;
}

/** The server settings of the validated environment, defaults filled in. Pure; throws ConfigError for a bad PLINTH_ADVERTISE_URL; `worker` is left unset. */
export function readServerConfig(env: EnvironmentVariables): ServerConfig {
  const { workers, reason: workersReason } = workersForThisHost(env.PLINTH_WORKERS, env.DATABASE_URL);
  return {
    port: env.PORT ?? 6443,
    host: env.HOST ?? '127.0.0.1',
    logLevel: env.LOG_LEVEL ?? 'info',
    shutdownDelaySeconds: env.PLINTH_SHUTDOWN_DELAY_SECONDS ?? 5,
    shutdownTimeoutSeconds: env.PLINTH_SHUTDOWN_TIMEOUT_SECONDS ?? 60,
    requestTimeoutSeconds: env.PLINTH_REQUEST_TIMEOUT_SECONDS ?? 60,
    celWorkers: env.PLINTH_CEL_WORKERS ?? 2,
    workers,
    workersReason,
    healthPort: env.PLINTH_HEALTH_PORT,
    advertiseUrl: readAdvertiseUrl(env.PLINTH_ADVERTISE_URL),
  };
}
