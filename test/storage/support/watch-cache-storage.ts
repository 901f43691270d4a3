import type { Kysely } from 'kysely';
import { ChangeLogRepository, createPostgresStorage, type DB, WatchPipeline } from '@plinth/storage';
import type { ConformanceStorageFactory, ConformanceTarget } from './conformance-storage.js';
import { eventually } from '../../support/eventually.js';

const silent = { info: () => undefined, warn: () => undefined, error: () => undefined };

/**
 * The same store read through a replica's watch pipeline: the relay
 * (LISTEN/NOTIFY, or Redis Streams when `redisUrl` is given) feeds a watch
 * cache window of `capacity` changes, and the storage serves watches from
 * it (history older than the window from the change log), as the API does.
 */
export function watchCacheStorage(capacity: number, redisUrl?: string): ConformanceStorageFactory {
  return async (db: Kysely<DB>, databaseUrl: string): Promise<ConformanceTarget> => {
    let pipeline: WatchPipeline | undefined;
    const storage = createPostgresStorage({ source: db, watchCacheOf: () => pipeline?.cache });
    pipeline = new WatchPipeline({
      databaseUrl,
      db,
      changes: new ChangeLogRepository(db),
      currentRevision: () => storage.currentRevision(),
      cacheSize: capacity,
      pollIntervalMs: 200,
      retentionSeconds: 86400,
      redisUrl,
      electionIntervalMs: 200,
      logger: silent,
    });
    await pipeline.start();
    if (redisUrl) {
      await eventually(() => pipeline.isRelay, { message: 'this pipeline to be the relay' });
    }
    const p = pipeline;
    return {
      name: redisUrl ? 'watch cache fed through Redis' : 'watch cache',
      storage,
      windowSize: capacity,
      async settle() {
        const target = await storage.currentRevision();
        await eventually(() => p.cache.revision >= target, { timeoutMs: 5000, intervalMs: 10, message: `the watch cache to apply revision ${target}` });
      },
      close: () => p.stop(),
    };
  };
}
