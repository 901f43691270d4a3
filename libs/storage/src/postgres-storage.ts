import { ChangeLogRepository } from './change-log.repository.js';
import { type ChunkSizing, type ListChunk, type ListQuery, type ListResult, ObjectListRepository } from './object-list.repository.js';
import type { ObjectKey, StoredObject } from './object-key.js';
import { ObjectStoreRepository } from './object-store.repository.js';
import type { DatabaseSource } from './shard-router.js';
import type { StorageTracer } from './storage-tracer.js';
import { isStorageError, StorageError } from './storage-error.js';
import type { GetOptions, GuaranteedUpdateOptions, Storage, StorageWatcher, TryUpdate, WatchScope, WatchSink } from './storage.interface.js';
import { watchChangeLog, watchThroughCache } from './storage-watch.js';
import type { WatchCache } from './watch/watch-cache.js';
import type { WriteBatcherOptions } from './write-batcher.js';

/** Options of {@link createPostgresStorage}. */
export interface PostgresStorageOptions {
  /** One database, or a router over the shards (tenants' objects on their shard). */
  source: DatabaseSource;
  /** How writes are batched into transactions (and the batch-size metric). */
  batching?: WriteBatcherOptions;
  /**
   * The watch cache that serves watches of `tenant` (a replica's cache of
   * the tenant's shard), or undefined to read them from the change log.
   * Without it every watch reads the change log.
   */
  watchCacheOf?: (tenant: string) => WatchCache | undefined;
  /** How often a watch read from the change log reads it again (default 100 ms). */
  pollIntervalMs?: number;
  /** Traces each get, create, update, delete and list (see StorageTracer); unset, nothing is traced. */
  tracer?: StorageTracer;
}

const DEFAULT_ATTEMPTS = 10;

/**
 * {@link Storage} over PostgreSQL: objects, lists and history through this
 * package's repositories, which it exposes for what is special to
 * PostgreSQL (tenant moves, quotas, namespace sweeps) and for the
 * application's wiring, so that every write goes through one batcher per
 * shard.
 */
export class PostgresStorage implements Storage {
  readonly objects: ObjectStoreRepository;
  readonly lists: ObjectListRepository;
  readonly changes: ChangeLogRepository;
  private readonly watchers = new Set<{ end(reason: string): void }>();

  constructor(private readonly options: PostgresStorageOptions) {
    this.objects = new ObjectStoreRepository(options.source, options.batching, options.tracer);
    this.lists = new ObjectListRepository(options.source, { tracer: options.tracer });
    this.changes = new ChangeLogRepository(options.source);
  }

  get(key: ObjectKey, options: GetOptions = {}): Promise<StoredObject | undefined> {
    return this.objects.get(key, undefined, options.internal ?? false);
  }

  list(query: ListQuery): Promise<ListResult> {
    return this.lists.list(query);
  }

  stream(query: ListQuery, sizing?: Partial<ChunkSizing>): AsyncGenerator<ListChunk, void, undefined> {
    return this.lists.stream(query, sizing);
  }

  create(key: ObjectKey, body: Record<string, unknown>): Promise<StoredObject> {
    return this.objects.create(key, body);
  }

  update(key: ObjectKey, body: Record<string, unknown>, expectedRevision: number | null): Promise<StoredObject> {
    return this.objects.update(key, body, expectedRevision);
  }

  delete(key: ObjectKey, expectedRevision: number | null): Promise<StoredObject> {
    return this.objects.delete(key, expectedRevision);
  }

  async guaranteedUpdate(key: ObjectKey, tryUpdate: TryUpdate, options: GuaranteedUpdateOptions = {}): Promise<StoredObject> {
    const attempts = options.maxAttempts ?? DEFAULT_ATTEMPTS;
    let current = options.cached;
    let fresh = current === undefined;
    if (!current) current = await this.get(key, { internal: true });
    for (let attempt = 1; ; attempt++) {
      if (!current) throw new StorageError('NotFound', `${key.resource} "${key.name}" not found`);
      const precondition = options.expectedRevision === undefined || current.revision === options.expectedRevision;
      // A cached state that fails the precondition, or that nothing would change, is confirmed by a read first.
      if (!fresh && !precondition) {
        [current, fresh] = [await this.get(key, { internal: true }), true];
        continue;
      }
      if (!precondition) throw new StorageError('Conflict', `${key.resource} "${key.name}" has been modified`);
      const next = await tryUpdate(current);
      if (next === undefined) {
        if (fresh) return current;
        [current, fresh] = [await this.get(key, { internal: true }), true];
        continue;
      }
      try {
        return await this.objects.update(key, next, current.revision);
      } catch (err) {
        if (!isStorageError(err, 'Conflict') || attempt >= attempts) throw err;
      }
      [current, fresh] = [await this.get(key, { internal: true }), true];
    }
  }

  async watch(scope: WatchScope, from: number, sink: WatchSink): Promise<StorageWatcher> {
    const cache = this.options.watchCacheOf?.(scope.tenant);
    if (cache) return watchThroughCache(cache, this.changes, scope, from, sink);
    const w = await watchChangeLog(this.changes, scope, from, sink, this.options.pollIntervalMs ?? 100);
    this.watchers.add(w);
    return {
      stop: () => {
        this.watchers.delete(w);
        w.stop();
      },
    };
  }

  ensureDurable(tenant?: string): Promise<void> {
    return this.objects.ensureDurable(tenant);
  }

  currentRevision(tenant?: string): Promise<number> {
    return this.lists.currentRevision(tenant);
  }

  compactedRevision(): Promise<number> {
    return this.changes.compactedRevision();
  }

  compact(olderThan: Date, batch: number): Promise<number> {
    return this.changes.compact(olderThan, batch);
  }

  /** Ends the watches it reads from the change log (watches of a cache end with the cache). */
  close(): void {
    for (const w of this.watchers) w.end('storage closed');
    this.watchers.clear();
  }
}

/** Builds the PostgreSQL {@link Storage} (see {@link PostgresStorageOptions}). */
export function createPostgresStorage(options: PostgresStorageOptions): PostgresStorage {
  return new PostgresStorage(options);
}
