import type { ChangeLogRepository } from '../change-log.repository.js';
import type { CacheFeeder } from './cache-feeder.js';
import type { PipelineLogger } from './pipeline-logger.js';
import type { WatchCache } from './watch-cache.js';

/** What feeds a replica's watch cache: see LocalChangeFeed and ClusterChangeFeed. */
export interface ChangeFeed {
  /** Starts feeding the cache, which is already reset to the newest revision. */
  start(): Promise<void>;
  stop(): Promise<void>;
  /** True while this process runs the relay. */
  readonly isRelay: boolean;
  /** What is wrong right now so that watches cannot be served correctly, for readiness; empty when healthy. */
  problems(): string[];
  /**
   * What is impaired while watches are still served correctly (e.g. Redis
   * down, changes read from PostgreSQL instead, later): reported, not fatal.
   */
  degradations(): string[];
}

/** What every feed needs. */
export interface ChangeFeedDeps {
  databaseUrl: string;
  changes: ChangeLogRepository;
  cache: WatchCache;
  feeder: CacheFeeder;
  currentRevision: () => Promise<number>;
  pollIntervalMs: number;
  logger: PipelineLogger;
  onError?: (err: unknown) => void;
  /** Called with the revision of each NOTIFY this replica's listener receives (for the fan-out timings). */
  onNotify?: (revision: number) => void;
  /** Cluster mode: called with the number of changes each stream read delivered. */
  onStreamed?: (count: number) => void;
}
