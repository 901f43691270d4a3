import { type ChangeEvent, type ChangeLogRepository, openChange, prepareChanges } from '../change-log.repository.js';
import { isStorageError } from '../storage-error.js';
import type { PipelineLogger } from './pipeline-logger.js';
import type { WatchCache } from './watch-cache.js';

/** Options of {@link CacheFeeder}. */
export interface CacheFeederOptions {
  cache: WatchCache;
  changes: ChangeLogRepository;
  currentRevision: () => Promise<number>;
  logger: PipelineLogger;
  /** Called with the number of changes read from PostgreSQL to fill a hole. */
  onBackfill?: (count: number) => void;
}

const BATCH = 500;

/**
 * The only writer of a replica's watch cache. Changes arrive from the
 * change log (authoritative, in order) or from a stream that may skip or
 * repeat (Redis during a relay failover or a Redis restart): anything at or
 * below the cache's revision is dropped as a repeat, and a change beyond
 * the next one means a hole, which is filled from the change log first.
 * Fills run one at a time; a contiguous stream batch with no fill running
 * is applied synchronously, which keeps the fast path fast. Changes arrive
 * as stored (encrypted objects stay encrypted on the way, Redis included)
 * and are decrypted here, as they enter the cache.
 */
export class CacheFeeder {
  private chain: Promise<void> = Promise.resolve();
  private pending = 0;

  constructor(private readonly opts: CacheFeederOptions) {}

  /** Applies changes read from the change log in revision order. */
  applyLog(changes: ChangeEvent[]): void {
    const { cache } = this.opts;
    for (const c of changes) if (c.revision > cache.revision) cache.append(openChange(c));
  }

  /** Applies changes from the stream, filling any hole from the change log first. */
  applyStream(changes: ChangeEvent[]): Promise<void> {
    // A data key still to fetch (KMS v2) sends the batch down the serial path, which awaits it in order.
    const keys = prepareChanges(changes);
    if (!keys && this.pending === 0 && this.contiguous(changes)) {
      this.applyLog(changes);
      return Promise.resolve();
    }
    return this.serial(async () => {
      if (keys) await keys;
      for (const c of changes) {
        if (c.revision <= this.opts.cache.revision) continue;
        if (c.revision > this.opts.cache.revision + 1) await this.fill(c.revision - 1);
        if (c.revision > this.opts.cache.revision) this.opts.cache.append(openChange(c));
      }
    });
  }

  /** Reads the change log until the cache holds everything up to `upTo` (or everything committed). */
  catchUp(upTo?: number): Promise<void> {
    return this.serial(() => this.fill(upTo));
  }

  private contiguous(changes: ChangeEvent[]): boolean {
    let expect = this.opts.cache.revision + 1;
    for (const c of changes) {
      if (c.revision < expect) continue;
      if (c.revision !== expect) return false;
      expect++;
    }
    return true;
  }

  private serial(task: () => Promise<void>): Promise<void> {
    this.pending++;
    const run = this.chain.then(task).finally(() => {
      this.pending--;
    });
    this.chain = run.catch(() => undefined);
    return run;
  }

  private async fill(upTo?: number): Promise<void> {
    const { cache, changes } = this.opts;
    let read = 0;
    try {
      while (upTo === undefined || cache.revision < upTo) {
        const batch = await changes.changesAfter(cache.revision, BATCH);
        const keys = prepareChanges(batch);
        if (keys) await keys;
        this.applyLog(batch);
        read += batch.length;
        if (batch.length < BATCH) break;
      }
    } catch (err) {
      if (!isStorageError(err, 'Expired')) throw err;
      const to = await this.opts.currentRevision();
      this.opts.logger.warn({ from: cache.revision, to }, 'watch cache: fell behind the kept history; restarting the window');
      cache.reset(to, 'watch cache fell behind the kept history');
    } finally {
      if (read > 0) this.opts.onBackfill?.(read);
    }
  }
}
