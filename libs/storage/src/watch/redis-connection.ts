import { Redis, type RedisOptions } from 'ioredis';
import type { PipelineLogger } from './pipeline-logger.js';
import { parseHostList, usesHostList } from '../host-list-connector.js';

/** Connection settings parsed from a `redis://` or `rediss://` URL, in the form ioredis and BullMQ accept. */
export function redisOptionsFromUrl(url: string): RedisOptions {
  const u = new URL(url);
  const db = u.pathname.length > 1 ? Number(u.pathname.slice(1)) : 0;
  return {
    host: u.hostname.replace(/^\[|\]$/g, ''),
    port: u.port ? Number(u.port) : 6379,
    username: u.username ? decodeURIComponent(u.username) : undefined,
    password: u.password ? decodeURIComponent(u.password) : undefined,
    db: Number.isInteger(db) ? db : 0,
    tls: u.protocol === 'rediss:' ? {} : undefined,
  };
}

/**
 * Opens a Redis client for the watch pipeline. Commands fail at once while
 * disconnected (no offline queue), so callers notice an outage and fall
 * back to PostgreSQL instead of piling up work; ioredis reconnects by
 * itself with a capped backoff.
 */
export function createRedisClient(url: string, name: string, logger: PipelineLogger): Redis {
  const client = new Redis({
    ...redisOptionsFromUrl(url),
    connectionName: name,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    retryStrategy: (times) => Math.min(100 * times, 2000),
    lazyConnect: true,
  });
  let reported = false;
  client.on('error', (err: Error) => {
    if (!reported) logger.warn({ err: err.message, connection: name }, 'watch: Redis connection error');
    reported = true;
  });
  client.on('ready', () => {
    if (reported) logger.info({ connection: name }, 'watch: Redis connection restored');
    reported = false;
  });
  client.connect().catch(() => undefined);
  return client;
}

/**
 * The Redis key prefix of one Plinth database (`plinth:{<database name>}`),
 * so several clusters (or test databases) can share one Redis.
 */
export function redisKeyPrefix(databaseUrl: string): string {
  let db = 'plinth';
  try {
    const u = new URL(usesHostList(databaseUrl) ? parseHostList(databaseUrl).urlFor(0) : databaseUrl);
    db = decodeURIComponent(u.pathname.slice(1)) || u.username || 'plinth';
  } catch {
    // Keep the default; a bad URL fails elsewhere first.
  }
  return `plinth:{${db}}`;
}

/** Resolves once `client` is ready, or after `ms` (whichever is first); true when ready. */
export async function waitReady(client: Redis, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (client.status !== 'ready' && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  return client.status === 'ready';
}
