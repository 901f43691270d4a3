import type { EnvironmentVariables } from './environment-variables.dto.js';

/** The watch part of AppConfig: the watch cache, bookmarks, how long and how many watches, and a slow watcher's bound. */
export interface WatchConfig {
  watchCacheSize: number;
  bookmarkIntervalSeconds: number;
  maxWatchSeconds: number;
  /** Open watches per replica (0: only the file-descriptor bound); never more than the open-file limit minus a headroom. */
  maxWatches: number;
  /** Open watches per tenant on one replica (0: no limit). */
  maxWatchesPerTenant: number;
  /** Open watches per user (within a tenant) on one replica (0: no limit). */
  maxWatchesPerUser: number;
  /** Fallback poll of the change log when no NOTIFY / stream entry arrives. */
  watchPollIntervalMs: number;
  /** Bytes a watcher may have queued before it is closed as too slow. */
  watchBufferBytes: number;
  /** How far ahead of each shard's revision counter its ceiling is reserved in Redis (cluster mode; revision-fence.ts). */
  revisionCeilingBlock: number;
}

/** The watch settings of the validated environment, defaults filled in. Pure; never throws. */
export function readWatchConfig(env: EnvironmentVariables): WatchConfig {
  return {
    watchCacheSize: env.PLINTH_WATCH_CACHE_SIZE ?? 10000,
    bookmarkIntervalSeconds: env.PLINTH_BOOKMARK_INTERVAL_SECONDS ?? 60,
    maxWatchSeconds: env.PLINTH_MAX_WATCH_SECONDS ?? 1800,
    maxWatches: env.PLINTH_MAX_WATCHES ?? 0,
    maxWatchesPerTenant: env.PLINTH_MAX_WATCHES_PER_TENANT ?? 5000,
    maxWatchesPerUser: env.PLINTH_MAX_WATCHES_PER_USER ?? 2000,
    watchPollIntervalMs: env.PLINTH_WATCH_POLL_INTERVAL_MS ?? 1000,
    watchBufferBytes: env.PLINTH_WATCH_BUFFER_BYTES ?? 1024 * 1024,
    revisionCeilingBlock: env.PLINTH_REVISION_CEILING_BLOCK ?? 1_000_000,
  };
}
