import assert from 'node:assert/strict';
import { watchCacheStorage } from './support/watch-cache-storage.js';
import { describeStorageConformance } from './support/storage-conformance.suite.js';

// A small window, so that history older than it is served from the change log as on a busy replica.
describeStorageConformance('through the watch cache', watchCacheStorage(8));

// Registered whatever the environment: without Redis the suite fails in its set-up, as the other
// cluster-mode suites do, instead of silently running nothing.
describeStorageConformance('through the watch cache, fed by Redis in cluster mode', async (db, databaseUrl) => {
  const redisUrl = process.env.PLINTH_TEST_REDIS_URL;
  assert.ok(redisUrl, 'PLINTH_TEST_REDIS_URL is not set: run with test/run-tests.mjs (redis-server must be installed)');
  return watchCacheStorage(8, redisUrl)(db, databaseUrl);
});
