import { watchCacheStorage } from './support/watch-cache-storage.js';
import { describeStorageConformance } from './support/storage-conformance.suite.js';

// A small window, so that history older than it is served from the change log as on a busy replica.
describeStorageConformance('through the watch cache', watchCacheStorage(8));

const redisUrl = process.env.PLINTH_TEST_REDIS_URL;
if (redisUrl) describeStorageConformance('through the watch cache, fed by Redis in cluster mode', watchCacheStorage(8, redisUrl));
