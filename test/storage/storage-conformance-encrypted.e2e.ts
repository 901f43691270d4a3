import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { AesGcmTransformer, createDatabase, installResourceTransformers, PrefixTransformers, redisKeyPrefix } from '@plinth/storage';
import { createTestDatabase } from '../support/test-database.js';
import { ChangeCollector, postgresStorage } from './support/conformance-storage.js';
import { describeStorageConformance } from './support/storage-conformance.suite.js';
import { watchCacheStorage } from './support/watch-cache-storage.js';

// The suite's resource (configmaps) encrypted with aesgcm, as PLINTH_ENCRYPTION_PROVIDER_CONFIG would: every
// assertion of the store (lists at past revisions and selectors included) and of watches from the cache must hold.
const keys = new PrefixTransformers('no matching key was found for the provided AES transformer', [{ prefix: Buffer.from('key1:'), transformer: new AesGcmTransformer(randomBytes(32)) }]);
const transformer = new PrefixTransformers('no matching prefix found', [{ prefix: Buffer.from('k8s:enc:aesgcm:v1:'), transformer: keys }]);
installResourceTransformers({ forResource: (resource) => (resource === 'configmaps' ? { transformer, encrypts: true } : undefined) });

describeStorageConformance('PostgreSQL store, configmaps encrypted with aesgcm', postgresStorage);
// A small window, so that history older than it is read from the change log (decrypted there) as on a busy replica.
describeStorageConformance('through the watch cache, configmaps encrypted with aesgcm', watchCacheStorage(8));
// Redis carries the changes encrypted; each replica decrypts them as they enter its cache.
describeStorageConformance('through the watch cache fed by Redis, configmaps encrypted with aesgcm', async (db, databaseUrl) => {
  const redisUrl = process.env.PLINTH_TEST_REDIS_URL;
  assert.ok(redisUrl, 'PLINTH_TEST_REDIS_URL is not set: run with test/run-tests.mjs (redis-server must be installed)');
  return watchCacheStorage(8, redisUrl)(db, databaseUrl);
});

describe('the Redis stream of cluster mode carries encrypted objects', () => {
  it('holds the stored ciphertext of an encrypted change, never its plaintext, while the watch gets the object', async () => {
    const redisUrl = process.env.PLINTH_TEST_REDIS_URL;
    assert.ok(redisUrl, 'PLINTH_TEST_REDIS_URL is not set: run with test/run-tests.mjs (redis-server must be installed)');
    const tdb = await createTestDatabase('encrypted-redis');
    const db = createDatabase({ connectionString: tdb.url, maxConnections: 4 });
    const redis = new Redis(redisUrl);
    const t = await watchCacheStorage(8, redisUrl)(db, tdb.url);
    try {
      const from = await t.storage.currentRevision();
      const w = await ChangeCollector.open(t.storage, { tenant: 'default', resource: 'configmaps' }, from);
      await t.storage.create({ tenant: 'default', resource: 'configmaps', namespace: 'ns', name: 'r' }, { metadata: { name: 'r', namespace: 'ns' }, data: { v: 'redis-plaintext-value' } });
      const [event] = await w.take(1);
      assert.deepEqual(event.object.data, { v: 'redis-plaintext-value' });
      w.stop();
      const entries = await redis.xrange(`${redisKeyPrefix(tdb.url)}:changes`, '-', '+');
      const text = JSON.stringify(entries);
      assert.ok(text.includes('k8s:enc:aesgcm:v1:key1:'), 'the stream holds the stored value');
      assert.equal(text.includes('redis-plaintext-value'), false);
    } finally {
      await t.close();
      redis.disconnect();
      await db.destroy();
      await tdb.drop();
    }
  });
});
