import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import type { Kysely } from 'kysely';
import { createDatabase, type DB, RedisRevisionLeaseStore, RevisionFence } from '@plinth/storage';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { SentinelCluster } from '../ha/support/redis-sentinel-cluster.js';

describe('revision ceiling in Redis across a Redis failover (issue 41)', { timeout: 60_000 }, () => {
  let tdb: TestDatabase;
  let db: Kysely<DB>;
  let redis: SentinelCluster;
  const clients: Redis[] = [];

  before(async () => {
    tdb = await createTestDatabase('ceiling-redis');
    db = createDatabase({ connectionString: tdb.url, maxConnections: 2 });
    redis = await SentinelCluster.start();
  });
  after(async () => {
    for (const c of clients) c.disconnect();
    await db.destroy();
    await tdb.drop().catch(() => undefined);
    await redis.stop();
  });

  function masterClient(): Redis {
    const c = new Redis({ host: '127.0.0.1', port: redis.dataPorts[0], maxRetriesPerRequest: 1 });
    clients.push(c);
    return c;
  }

  it('puts back a ceiling Redis lost (a failover to a replica without the last raise) at the next check', async () => {
    const client = masterClient();
    const store = new RedisRevisionLeaseStore(client);
    const leaseKey = `test:{${tdb.name}}:ceiling`;
    const fence = new RevisionFence({ db, leaseStore: store, leaseKey, block: 1000, seen: () => 0 });
    const first = await fence.check();
    assert.ok(first.ceiling !== null);
    const key = `${leaseKey}:${first.systemIdentifier}`;
    assert.equal(await store.read(key), first.ceiling);
    // What a promoted replica that never got the last raise holds: an older, lower ceiling.
    await client.set(key, String(first.ceiling - 1000));
    const second = await fence.check();
    assert.equal(second.ceiling, first.ceiling, 'the database ceiling did not need extending');
    assert.equal(await store.read(key), first.ceiling, 'Redis holds the database ceiling again');
  });

  it('a raise no replica acknowledges fails (so the database ceiling is not extended past what a failover keeps)', async () => {
    const client = masterClient();
    const store = new RedisRevisionLeaseStore(client);
    await store.raise('test:acked', 10);
    await redis.signal(redis.dataPorts[1], 'SIGSTOP');
    try {
      await assert.rejects(store.raise('test:acked', 20), /no Redis replica acknowledged the write within 1000 ms/);
    } finally {
      await redis.signal(redis.dataPorts[1], 'SIGCONT');
    }
    await store.raise('test:acked', 30);
    assert.equal(await store.read('test:acked'), 30);
  });
});
