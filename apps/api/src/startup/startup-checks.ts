import { Redis } from 'ioredis';
import { parseRedisUrl, redisOptionsFromUrl } from '@plinth/storage';
import { EXIT_CONFIGURATION, EXIT_FAILURE, StartupFailure } from './startup-failure.js';

/**
 * Cluster mode's start-up check of REDIS_URL: connects once (no retries,
 * `timeoutMs` at most) and pings, so an unreachable Redis or refused
 * credentials stop start-up with a sentence naming REDIS_URL instead of
 * a server that starts and then retries in the background forever.
 * Throws {@link StartupFailure} (exit 1 unreachable, 2 credentials
 * refused); resolves when Redis answers.
 */
export async function checkRedis(url: string, timeoutMs = 5000): Promise<void> {
  const client = new Redis({
    ...redisOptionsFromUrl(url),
    // One round through the Sentinels (when named), no retries.
    sentinelRetryStrategy: () => null,
    lazyConnect: true,
    connectTimeout: timeoutMs,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  // The socket's own error (ECONNREFUSED…) says more than connect()'s rejection ("Connection is closed.").
  let socketError: Error | undefined;
  client.on('error', (err: Error) => (socketError ??= err));
  // Through Sentinels: why the first one failed (ECONNREFUSED…), rather than "all sentinels are unreachable".
  client.on('sentinelError', (err: Error) => (socketError ??= err));
  const target = parseRedisUrl(url);
  const where = `Redis ${target.kind === 'sentinel' ? '' : 'at '}${target.display} (REDIS_URL)`;
  try {
    await client.connect();
    await client.ping();
  } catch (err) {
    const text = (socketError ?? (err instanceof Error ? err : new Error(String(err)))).message;
    if (/NOAUTH|WRONGPASS|invalid password|invalid username/i.test(text)) {
      throw new StartupFailure(`${where} refused the credentials: ${text}; fix the user or password in REDIS_URL`, EXIT_CONFIGURATION);
    }
    throw new StartupFailure(
      `cannot reach ${where}: ${text}; cluster mode (REDIS_URL set) needs Redis: start it, fix REDIS_URL, or unset REDIS_URL to run a single node`,
      EXIT_FAILURE,
    );
  } finally {
    client.disconnect();
  }
}
