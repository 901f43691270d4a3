import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ChangeLogRepository, ObjectStoreRepository, WatchPipeline } from '@plinth/storage';
import { useStorageDatabase } from '../support/storage-database.js';

const silent = { info: () => undefined, warn: () => undefined, error: () => undefined };
/** Longer than the test's own timeout: a wait that ended did so because the pipeline stopped, not by its timer. */
const FOREVER_MS = 10 * 60_000;

describe('a watch pipeline that stops ends the waits for its cache', () => {
  const storage = useStorageDatabase('pipeline_stop');

  it('a write waiting for read-your-writes goes on when the pipeline stops, and later waits do not wait', { timeout: 60_000 }, async () => {
    const { db, tdb } = storage;
    const objects = new ObjectStoreRepository(db);
    const pipeline = new WatchPipeline({
      databaseUrl: tdb.url,
      db,
      changes: new ChangeLogRepository(db),
      currentRevision: () => objects.currentRevision(),
      cacheSize: 100,
      pollIntervalMs: 200,
      retentionSeconds: 86400,
      electionIntervalMs: 200,
      logger: silent,
    });
    await pipeline.start();
    const written = await objects.create({ tenant: 'default', resource: 'configmaps', namespace: 'w', name: 'a' }, { metadata: { name: 'a' } });
    assert.equal(await pipeline.waitApplied(written.revision, FOREVER_MS), true, 'a running pipeline applies the write');
    // A revision no write has reached: only the stop can end this wait.
    const waiting = pipeline.waitApplied(written.revision + 1000, FOREVER_MS);
    await pipeline.stop();
    assert.equal(await waiting, false);
    assert.equal(await pipeline.waitApplied(written.revision + 1000, FOREVER_MS), false);
    assert.equal(await pipeline.waitApplied(written.revision, FOREVER_MS), true, 'what the cache already applied still answers true');
  });
});
