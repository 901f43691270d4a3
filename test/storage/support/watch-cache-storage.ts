import type { Kysely } from 'kysely';
import {
  type ChangeEvent,
  ChangeLogRepository,
  type DB,
  ObjectListRepository,
  ObjectStoreRepository,
} from '@plinth/storage';
import { type CacheSubscriber, WatchCache, WatchPipeline } from '@plinth/storage';
import { ChangeCollector, type ConformanceStorage, type ConformanceStorageFactory } from './conformance-storage.js';
import { eventually } from '../../support/eventually.js';

const silent = { info: () => undefined, warn: () => undefined, error: () => undefined };

/** Resolves once the pipeline's cache has applied every committed change. */
async function caughtUp(pipeline: WatchPipeline, objects: ObjectStoreRepository): Promise<void> {
  const target = await objects.currentRevision();
  await eventually(() => pipeline.cache.revision >= target, { timeoutMs: 5000, intervalMs: 10, message: `the watch cache to apply revision ${target}` });
}

/**
 * Reads history the way a replica serves a watch: from the cache window
 * when it still covers `from`, otherwise from the change log, which throws
 * Expired below the compacted revision.
 */
async function since(pipeline: WatchPipeline, changes: ChangeLogRepository, from: number): Promise<ChangeEvent[]> {
  return pipeline.cache.since(from) ?? changes.changesAfter(from, 1000);
}

/**
 * Joins a watch from `from` without gap or repeat: catch up from the change
 * log while `from` is below the window, then take the window's tail and
 * subscribe in the same tick.
 */
async function join(pipeline: WatchPipeline, changes: ChangeLogRepository, w: ChangeCollector, sub: CacheSubscriber, tenant: string, resource: string): Promise<void> {
  let pos = w.from;
  const mine = (c: ChangeEvent) => c.key.tenant === tenant && c.key.resource === resource;
  for (;;) {
    const cached = pipeline.cache.since(pos);
    if (cached) {
      for (const c of cached) if (mine(c)) w.push(c);
      pipeline.cache.subscribe(sub);
      return;
    }
    const batch = await changes.changesAfter(pos, 500);
    if (batch.length === 0) {
      pipeline.cache.subscribe(sub);
      return;
    }
    for (const c of batch) if (mine(c)) w.push(c);
    pos = batch[batch.length - 1].revision;
  }
}

/**
 * The same store read through a replica's watch pipeline: the relay
 * (LISTEN/NOTIFY, or Redis Streams when `redisUrl` is given) feeds a watch
 * cache window of `capacity` changes, and history and watches are served
 * from it as the API serves them.
 */
export function watchCacheStorage(capacity: number, redisUrl?: string): ConformanceStorageFactory {
  return async (db: Kysely<DB>, databaseUrl: string): Promise<ConformanceStorage> => {
    const objects = new ObjectStoreRepository(db);
    const lists = new ObjectListRepository(db);
    const changes = new ChangeLogRepository(db);
    const pipeline = new WatchPipeline({
      databaseUrl,
      db,
      changes,
      currentRevision: () => objects.currentRevision(),
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
    return {
      name: redisUrl ? 'watch cache fed through Redis' : 'watch cache',
      objects,
      lists,
      changes,
      windowSize: capacity,
      async changesSince(from) {
        await caughtUp(pipeline, objects);
        return since(pipeline, changes, from);
      },
      async watch(tenant, resource, from) {
        await caughtUp(pipeline, objects);
        let sub: CacheSubscriber | undefined;
        const w = new ChangeCollector(() => sub && pipeline.cache.unsubscribe(sub), from);
        sub = {
          bucket: WatchCache.bucketKey(tenant, resource),
          onChange: (c) => w.push(c),
          onEnd: () => undefined,
        };
        await join(pipeline, changes, w, sub, tenant, resource);
        return w;
      },
      close: () => pipeline.stop(),
    };
  };
}
