import type { Kysely } from 'kysely';
import {
  type ChangeEvent,
  ChangeLogRepository,
  type DB,
  ObjectListRepository,
  ObjectStoreRepository,
  openChange,
} from '@plinth/storage';

/** A watch the conformance suite opened: the changes of one tenant's resource after a revision. */
export interface ConformanceWatch {
  /** Resolves with the next `n` changes (in arrival order), or rejects after `ms`. */
  take(n: number, ms?: number): Promise<ChangeEvent[]>;
  /** Changes received and not yet taken. */
  pending(): ChangeEvent[];
  stop(): void;
}

/**
 * The storage the conformance suite drives: writes, gets and lists go to
 * the repositories; the history a watcher replays (`changesSince`) and live
 * watches (`watch`) come from wherever the implementation under test
 * serves them (the change log, or a replica's watch cache).
 */
export interface ConformanceStorage {
  readonly name: string;
  objects: ObjectStoreRepository;
  lists: ObjectListRepository;
  changes: ChangeLogRepository;
  /**
   * Every committed change after `from`, oldest first, as a watch from
   * `from` replays them (at most 1000). Throws StorageError Expired when that
   * history is gone.
   */
  changesSince(from: number): Promise<ChangeEvent[]>;
  /** Opens a watch of `tenant`'s `resource` from revision `from`. Throws StorageError Expired when that history is gone. */
  watch(tenant: string, resource: string, from: number): Promise<ConformanceWatch>;
  /** Writes after which no window of this implementation still holds an older change (0 when there is no window). */
  readonly windowSize: number;
  close(): Promise<void>;
}

/** Builds a {@link ConformanceStorage} over a migrated database. */
export type ConformanceStorageFactory = (db: Kysely<DB>, databaseUrl: string) => Promise<ConformanceStorage>;

/** Collects changes pushed by a watch implementation and hands them out in order. */
export class ChangeCollector implements ConformanceWatch {
  private readonly queue: ChangeEvent[] = [];
  private waiter: (() => void) | undefined;
  private last = 0;
  private failure: Error | undefined;
  stopped = false;

  constructor(
    private readonly onStop: () => void,
    readonly from: number,
  ) {
    this.last = from;
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

  pending(): ChangeEvent[] {
    return [...this.queue];
  }

  stop(): void {
    this.stopped = true;
    this.onStop();
  }
}

/** The PostgreSQL store itself: history and watches read the change log (polled). */
export const postgresStorage: ConformanceStorageFactory = async (db) => {
  const objects = new ObjectStoreRepository(db);
  const lists = new ObjectListRepository(db);
  const changes = new ChangeLogRepository(db);
  const timers = new Set<NodeJS.Timeout>();
  return {
    name: 'PostgreSQL store',
    objects,
    lists,
    changes,
    windowSize: 0,
    // The change log gives objects as stored; its readers decrypt them (openChange: a no-op when nothing is encrypted).
    changesSince: async (from) => (await changes.changesAfter(from, 1000)).map(openChange),
    async watch(tenant, resource, from) {
      await changes.changesAfter(from, 1);
      let timer: NodeJS.Timeout | undefined;
      const w = new ChangeCollector(() => clearTimeout(timer), from);
      let pos = from;
      const poll = async (): Promise<void> => {
        if (w.stopped) return;
        try {
          for (const c of await changes.changesAfter(pos, 500)) {
            pos = c.revision;
            if (c.key.tenant === tenant && c.key.resource === resource) w.push(openChange(c));
          }
        } finally {
          if (!w.stopped) timers.add((timer = setTimeout(() => void poll(), 20)));
        }
      };
      await poll();
      return w;
    },
    async close() {
      for (const t of timers) clearTimeout(t);
    },
  };
};
