import type { ChangeEvent, ChangeLogRepository } from './change-log.repository.js';
import type { StorageWatcher, WatchScope, WatchSink } from './storage.interface.js';
import { type CacheSubscriber, WatchCache } from './watch/watch-cache.js';

/** Changes of the log read per statement while a watch catches up. */
const BATCH = 500;

/** True when `change` belongs to `scope`. */
function inScope(scope: WatchScope, change: ChangeEvent): boolean {
  const k = change.key;
  return (
    k.tenant === scope.tenant &&
    k.resource === scope.resource &&
    (scope.namespace === undefined || k.namespace === scope.namespace) &&
    (scope.name === undefined || k.name === scope.name)
  );
}

/**
 * Hands a watch's changes to its sink in revision order, each once: a
 * change at or below the last one delivered (the cache applying what the
 * log already gave) is dropped. Stopped, it delivers nothing more.
 */
class Delivery implements StorageWatcher {
  stopped = false;

  private onStop: () => void = () => undefined;

  constructor(
    private readonly sink: WatchSink,
    /** The revision up to which the sink has every change of the scope. */
    public last: number,
  ) {}

  push(change: ChangeEvent): void {
    if (this.stopped || change.revision <= this.last) return;
    this.last = change.revision;
    this.sink.onChange(change);
  }

  end(reason: string): void {
    if (this.stopped) return;
    this.stopped = true;
    this.onStop();
    this.sink.onEnd?.(reason);
  }

  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.onStop();
  }

  /** Sets what stopping releases (the watch's timer or subscription, known once it is open). */
  releaseWith(onStop: () => void): void {
    this.onStop = onStop;
  }
}

/**
 * A watch read from the change log alone: the index range of its scope,
 * read again every `pollIntervalMs`. Throws StorageError Expired (from the
 * first read) when the history after `from` is gone. A failed read later
 * ends the watch (the sink's onEnd); `end` ends it so from outside.
 */
export async function watchChangeLog(
  changes: ChangeLogRepository,
  scope: WatchScope,
  from: number,
  sink: WatchSink,
  pollIntervalMs: number,
): Promise<StorageWatcher & { end(reason: string): void }> {
  const d = new Delivery(sink, from);
  let timer: NodeJS.Timeout | undefined;
  d.releaseWith(() => clearTimeout(timer));
  const read = async (): Promise<void> => {
    for (;;) {
      const { events, scannedTo } = await changes.changesInScope(d.last, BATCH, scope);
      for (const c of events) d.push(c);
      if (d.stopped) return;
      d.last = Math.max(d.last, scannedTo);
      if (events.length < BATCH) return;
    }
  };
  const poll = async (): Promise<void> => {
    try {
      await read();
    } catch (err) {
      d.end(`reading the change log failed: ${(err as Error).message}`);
      return;
    }
    if (!d.stopped) timer = setTimeout(() => void poll(), pollIntervalMs);
  };
  await read();
  if (!d.stopped) timer = setTimeout(() => void poll(), pollIntervalMs);
  return d;
}

/**
 * A watch served by a replica's watch cache: the history older than the
 * cache's window from the change log, the rest from the window, then live
 * from the cache, subscribed in the same tick as the window's tail is
 * taken so that no change slips in between. Throws StorageError Expired
 * when the history after `from` is gone.
 */
export async function watchThroughCache(
  cache: WatchCache,
  changes: ChangeLogRepository,
  scope: WatchScope,
  from: number,
  sink: WatchSink,
): Promise<StorageWatcher> {
  const d = new Delivery(sink, from);
  const sub: CacheSubscriber = {
    bucket: WatchCache.bucketKey(scope.tenant, scope.resource),
    onChange: (c) => {
      if (inScope(scope, c)) d.push(c);
    },
    onEnd: (reason) => d.end(reason),
  };
  for (;;) {
    const cached = cache.since(d.last);
    if (cached) {
      for (const c of cached) if (inScope(scope, c)) d.push(c);
      d.releaseWith(() => cache.unsubscribe(sub));
      cache.subscribe(sub);
      return d;
    }
    // Older than the window: the log's index range of the scope.
    const { events, scannedTo } = await changes.changesInScope(d.last, BATCH, scope);
    for (const c of events) d.push(c);
    d.last = Math.max(d.last, scannedTo);
  }
}
