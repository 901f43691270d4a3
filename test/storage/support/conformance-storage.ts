import type { Kysely } from 'kysely';
import { type ChangeEvent, createPostgresStorage, type DB, type Storage, type WatchScope } from '@plinth/storage';

/**
 * One implementation of the library's Storage interface as the conformance
 * suite drives it: the storage, and what the suite must know of how it
 * serves watches.
 */
export interface ConformanceTarget {
  readonly name: string;
  readonly storage: Storage;
  /** Writes after which no window of this implementation still holds an older change (0 when there is no window). */
  readonly windowSize: number;
  /** Resolves once every committed change is visible to new watches (a cache has applied it). */
  settle(): Promise<void>;
  close(): Promise<void>;
}

/** Builds a {@link ConformanceTarget} over a migrated database. */
export type ConformanceStorageFactory = (db: Kysely<DB>, databaseUrl: string) => Promise<ConformanceTarget>;

/** Collects the changes a watch of the storage delivers and hands them out in order; a repeat or reorder fails the next take. */
export class ChangeCollector {
  private readonly queue: ChangeEvent[] = [];
  private waiter: (() => void) | undefined;
  private last: number;
  private failure: Error | undefined;
  private stopWatch: () => void = () => undefined;

  constructor(readonly from: number) {
    this.last = from;
  }

  /** Opens a watch of `scope` from `from` on `storage` into a new collector. Rejects as the watch does (Expired). */
  static async open(storage: Storage, scope: WatchScope, from: number): Promise<ChangeCollector> {
    const w = new ChangeCollector(from);
    const watcher = await storage.watch(scope, from, {
      onChange: (c) => w.push(c),
      onEnd: (reason) => (w.failure ??= new Error(`watch ended: ${reason}`)),
    });
    w.stopWatch = () => watcher.stop();
    return w;
  }

  /** Adds one change; never throws. A change at or below the last one pushed is a repeat: the next take fails. */
  push(c: ChangeEvent): void {
    if (c.revision <= this.last) {
      this.failure ??= new Error(`watch repeated or reordered revision ${c.revision} after ${this.last}`);
      return;
    }
    this.last = c.revision;
    this.queue.push(c);
    this.waiter?.();
  }

  /** Resolves with the next `n` changes (in arrival order), or rejects after `ms`. */
  async take(n: number, ms = 5000): Promise<ChangeEvent[]> {
    const deadline = Date.now() + ms;
    while (this.queue.length < n) {
      if (this.failure) throw this.failure;
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`watch from ${this.from}: ${this.queue.length} of ${n} changes within ${ms} ms`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, Math.min(left, 50));
        this.waiter = () => {
          clearTimeout(t);
          resolve();
        };
      });
      this.waiter = undefined;
    }
    if (this.failure) throw this.failure;
    return this.queue.splice(0, n);
  }

  /** Changes received and not yet taken. */
  pending(): ChangeEvent[] {
    return [...this.queue];
  }

  stop(): void {
    this.stopWatch();
  }
}

/** The PostgreSQL store itself (the library's factory): watches read the change log. */
export const postgresStorage: ConformanceStorageFactory = async (db) => {
  const storage = createPostgresStorage({ source: db, pollIntervalMs: 20 });
  return {
    name: 'PostgreSQL store',
    storage,
    windowSize: 0,
    settle: async () => undefined,
    close: async () => storage.close(),
  };
};
