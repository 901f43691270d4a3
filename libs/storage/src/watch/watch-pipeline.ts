import type { Kysely } from 'kysely';
import type { ChangeLogRepository } from '../change-log.repository.js';
import type { DB } from '../db.js';
import { CacheFeeder } from './cache-feeder.js';
import type { ChangeFeed } from './change-feed.js';
import { ClusterChangeFeed } from './cluster-change-feed.js';
import { CompactionService } from './compaction.service.js';
import { FanOutClock, type FanOutTiming } from './fan-out-clock.js';
import { LocalChangeFeed } from './local-change-feed.js';
import type { PipelineLogger } from './pipeline-logger.js';
import { redisKeyPrefix } from './redis-connection.js';
import { type CachedChange, WatchCache } from './watch-cache.js';

/** Options of {@link WatchPipeline}. */
export interface WatchPipelineOptions {
  databaseUrl: string;
  db: Kysely<DB>;
  changes: ChangeLogRepository;
  /** The newest committed revision. */
  currentRevision: () => Promise<number>;
  /** Changes the watch cache window holds. */
  cacheSize: number;
  /** Fallback poll of the change log (missed NOTIFY, stalled stream). */
  pollIntervalMs: number;
  retentionSeconds: number;
  /** Set: cluster mode (relay election, Redis Stream fan-out). */
  redisUrl?: string;
  electionIntervalMs?: number;
  logger: PipelineLogger;
  /** Told how long each change with watchers took to reach them all (for metrics). */
  onFanOut?: (timing: FanOutTiming) => void;
  /** Told of each change handed to watchers: how many, and when the first got it (performance.now()), for its trace span. */
  onDispatch?: (change: CachedChange, subscribers: number, startedAt: number) => void;
}

/** Counters the pipeline keeps for metrics. */
export interface PipelineCounters {
  /** Changes read from PostgreSQL to fill holes in the stream. */
  backfilled: number;
  /** Failed reads, publishes or stream reads. */
  errors: number;
  /** Cluster mode: changes received from the Redis stream. */
  streamed: number;
}

const STALL_GRACE_MS = 5000;

/**
 * The path of a change from commit to a replica's watch cache, per mode:
 * single node, NOTIFY → relay → cache; cluster, NOTIFY → elected relay →
 * Redis Stream → every replica's cache, with PostgreSQL filling holes. Holds
 * the history compaction service (scheduled as a job by the application).
 * Watchers subscribe to {@link cache}.
 */
export class WatchPipeline {
  readonly cache: WatchCache;
  readonly compaction: CompactionService;
  readonly counters: PipelineCounters = { backfilled: 0, errors: 0, streamed: 0 };
  readonly mode: 'single' | 'cluster';
  private readonly feeder: CacheFeeder;
  private readonly feed: ChangeFeed;
  private behind: { target: number; since: number } | undefined;
  private started = false;
  /** True once stop() began: a wait for the cache ends at once. */
  private halted = false;
  /** Ends the waits in progress (false) when the pipeline stops. */
  private readonly waiting = new Set<() => void>();

  constructor(private readonly opts: WatchPipelineOptions) {
    const { logger } = opts;
    const clock = opts.onFanOut ? new FanOutClock(opts.onFanOut) : undefined;
    const traced = opts.onDispatch;
    this.cache = new WatchCache(
      opts.cacheSize,
      clock || traced
        ? (revision, n, startedAt, change) => {
            clock?.dispatched(revision, n, startedAt);
            traced?.(change, n, startedAt);
          }
        : undefined,
    );
    this.feeder = new CacheFeeder({
      cache: this.cache,
      changes: opts.changes,
      currentRevision: opts.currentRevision,
      logger,
      onBackfill: (n) => (this.counters.backfilled += n),
    });
    this.compaction = new CompactionService({ db: opts.db, changes: opts.changes, retentionSeconds: opts.retentionSeconds, logger });
    const deps = {
      databaseUrl: opts.databaseUrl,
      changes: opts.changes,
      cache: this.cache,
      feeder: this.feeder,
      currentRevision: opts.currentRevision,
      pollIntervalMs: opts.pollIntervalMs,
      logger,
      onError: () => this.counters.errors++,
      onStreamed: (n: number) => (this.counters.streamed += n),
      onNotify: clock && ((revision: number) => clock.notify(revision)),
    };
    const prefix = redisKeyPrefix(opts.databaseUrl);
    if (opts.redisUrl) {
      this.mode = 'cluster';
      this.feed = new ClusterChangeFeed(deps, {
        redisUrl: opts.redisUrl,
        streamKey: `${prefix}:changes`,
        streamMaxLen: Math.max(opts.cacheSize, 1000),
        electionIntervalMs: opts.electionIntervalMs,
      });
    } else {
      this.mode = 'single';
      this.feed = new LocalChangeFeed(deps);
    }
  }

  /** True while this process runs the relay (always in single-node mode). */
  get isRelay(): boolean {
    return this.feed.isRelay;
  }

  /** Starts the window at the newest revision, then the feed. */
  async start(): Promise<void> {
    if (this.started) return;
    this.cache.reset(await this.opts.currentRevision(), 'watch cache started');
    await this.feed.start();
    this.started = true;
  }

  /**
   * Empties the cache and restarts it at the newest revision (its watchers
   * end): after a failover lost revisions it had applied.
   */
  async restartCache(reason: string): Promise<void> {
    if (!this.started) return;
    this.cache.reset(await this.opts.currentRevision(), reason);
  }

  /** Ends every watcher, then stops the feed. */
  async stop(): Promise<void> {
    if (!this.started) return;
    this.started = false;
    this.halted = true;
    for (const giveUp of this.waiting) giveUp();
    this.cache.endAll('server shutting down');
    await this.feed.stop();
  }

  /** What is impaired while watches are still served correctly (reported by /readyz?verbose and a metric, not fatal). */
  degradations(): string[] {
    return this.feed.degradations();
  }

  /**
   * Resolves true once this replica's watch cache (and so every change
   * observer on it) has applied `revision`; false after `timeoutMs` when the
   * stream is behind, so that a caller waiting for read-your-writes goes on
   * rather than hangs, and at once when the pipeline stops (or has stopped).
   */
  async waitApplied(revision: number, timeoutMs = 5000): Promise<boolean> {
    if (revision <= this.cache.revision) return true;
    // A stopped pipeline applies nothing more: waiting would only hold its caller (a write) for the whole timeout.
    if (this.halted) return false;
    let timer: NodeJS.Timeout | undefined;
    let giveUp: (() => void) | undefined;
    const timeout = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), timeoutMs);
      giveUp = () => resolve(false);
      this.waiting.add(giveUp);
    });
    try {
      return await Promise.race([this.cache.whenApplied(revision).then(() => true), timeout]);
    } finally {
      clearTimeout(timer);
      this.waiting.delete(giveUp!);
    }
  }

  /**
   * What is wrong with the pipeline, for readiness: the feed's own problems,
   * plus the cache staying behind the newest committed revision for more
   * than a few seconds. Empty when healthy.
   */
  async problems(): Promise<string[]> {
    const out = this.feed.problems();
    let current: number;
    try {
      current = await this.opts.currentRevision();
    } catch {
      return [...out, 'cannot read the newest revision'];
    }
    if (current <= this.cache.revision) this.behind = undefined;
    else if (!this.behind || this.behind.target < this.cache.revision) this.behind = { target: current, since: Date.now() };
    else if (Date.now() - this.behind.since > STALL_GRACE_MS) {
      out.push(`the watch cache is ${current - this.cache.revision} revisions behind`);
    }
    return out;
  }
}
