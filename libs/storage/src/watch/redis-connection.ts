import { Redis, type RedisOptions } from 'ioredis';
import type { PipelineLogger } from './pipeline-logger.js';
import { parseHostList, usesHostList } from '../host-list-connector.js';
import { parseRedisUrl } from '../redis-url.js';

/**
 * The connection settings of REDIS_URL (a server, or a master found through
 * Sentinels: {@link parseRedisUrl}), in the form ioredis and BullMQ accept:
 * every Redis connection Plinth opens starts from these (the watch fan-out,
 * the revision ceiling, BullMQ's queues and workers, the start-up check), so
 * each one follows a Sentinel failover. A connection still on a master that
 * was turned into a replica (a switchover) reconnects on its first refused
 * write (READONLY), which finds the new master.
 */
export function redisOptionsFromUrl(url: string): RedisOptions {
  return {
    ...parseRedisUrl(url).options,
    reconnectOnError: (err) => (/^READONLY/.test(err.message) ? 1 : false),
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

/**
 * Makes the writes `client` sent so far survive a Redis failover: when the
 * master has replicas, waits (WAIT) until one of them has them, and throws
 * if none acknowledges within `ms` (the write may then be lost if the
 * master is). A master without replicas has nothing to wait for (its
 * persistence is what keeps the writes). Resolves with the replicas that
 * acknowledged.
 */
export async function waitForReplica(client: Redis, ms = 1000): Promise<number> {
  const replicas = Number(/connected_slaves:(\d+)/.exec(await client.info('replication'))?.[1] ?? 0);
  if (replicas === 0) return 0;
  const acked = await client.wait(1, ms);
  if (acked < 1) throw new Error(`no Redis replica acknowledged the write within ${ms} ms (${replicas} connected)`);
  return acked;
}
