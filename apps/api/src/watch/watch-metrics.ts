import { Counter, Histogram, type Registry } from 'prom-client';
import type { FanOutTiming } from '@plinth/storage';
import { scrapedCounter, scrapedGauge } from '../observability/scraped-metrics.js';

/** What the watch gauges read when scraped. */
export interface WatchMetricsSource {
  watchers(): number;
  cacheRevision(): number;
  cacheOldestResumable(): number;
  cacheLength(): number;
  isRelay(): boolean;
  compactionLagSeconds(): number;
  compactedRevision(): number;
  backfilled(): number;
  streamed(): number;
  pipelineErrors(): number;
  compactedTotal(): number;
  /** 1 while the fan-out is degraded (Redis down, PostgreSQL fallback serving), else 0. */
  degraded(): number;
  /** Watch events written to watchers so far. */
  eventsSent(): number;
}

/** Buckets of the fan-out histograms (seconds): fine from 1 to 50 ms, where the 20 ms goal at 1,000 watchers lies. */
const FAN_OUT_BUCKETS = [0.0005, 0.001, 0.002, 0.003, 0.005, 0.0075, 0.01, 0.0125, 0.015, 0.0175, 0.02, 0.025, 0.03, 0.04, 0.05, 0.075, 0.1, 0.25, 0.5, 1];

/** The watch path's Prometheus metrics, registered on the server's registry. */
export class WatchMetrics {
  readonly slowClosed: Counter;
  readonly opened: Counter;
  private readonly dispatch: Histogram;
  private readonly notifyToWritten: Histogram;

  constructor(registry: Registry, src: WatchMetricsSource) {
    const registers = [registry];
    this.dispatch = new Histogram({
      name: 'plinth_watch_dispatch_seconds',
      help: 'From a change entering the watch cache to its write to the connection of the last of its watchers on this replica.',
      buckets: FAN_OUT_BUCKETS,
      registers,
    });
    this.notifyToWritten = new Histogram({
      name: 'plinth_watch_notify_to_written_seconds',
      help: "From the commit's NOTIFY reaching this replica (the relay) to the change written to the connection of its last watcher here.",
      buckets: FAN_OUT_BUCKETS,
      registers,
    });
    this.slowClosed = new Counter({
      name: 'plinth_watch_slow_consumers_closed_total',
      help: 'Watches closed because the client did not keep up (its buffer overflowed).',
      registers,
    });
    this.opened = new Counter({ name: 'plinth_watch_opened_total', help: 'Watches started.', registers });
    const gauge = (name: string, help: string, read: () => number) => scrapedGauge(registers, name, help, read);
    gauge('plinth_watchers', 'Open watches on this replica.', src.watchers);
    gauge('plinth_watch_cache_revision', 'Newest revision in the watch cache.', src.cacheRevision);
    gauge('plinth_watch_cache_oldest_resumable_revision', 'Oldest revision a watch can resume from without PostgreSQL.', src.cacheOldestResumable);
    gauge('plinth_watch_cache_events', 'Changes held by the watch cache window.', src.cacheLength);
    gauge('plinth_watch_relay_leader', '1 when this replica runs the watch relay.', () => (src.isRelay() ? 1 : 0));
    gauge('plinth_watch_compaction_lag_seconds', 'How far the oldest kept change is past the retention.', src.compactionLagSeconds);
    gauge('plinth_watch_compacted_revision', 'Changes at or below this revision may be gone.', src.compactedRevision);
    gauge('plinth_watch_fanout_degraded', '1 while Redis is unreachable and changes reach watchers through the PostgreSQL fallback.', src.degraded);
    // Counters kept by the pipeline, exposed as Prometheus counters that catch up when scraped.
    const counter = (name: string, help: string, read: () => number) => scrapedCounter(registers, name, help, read);
    counter('plinth_watch_events_sent_total', 'Watch events written to watchers.', src.eventsSent);
    counter('plinth_watch_compacted_changes_total', 'Changes deleted by compaction on this replica.', src.compactedTotal);
    counter('plinth_watch_backfilled_changes_total', 'Changes read from PostgreSQL to fill holes in the stream.', src.backfilled);
    counter('plinth_watch_streamed_changes_total', 'Changes received from the Redis stream (cluster mode).', src.streamed);
    counter('plinth_watch_pipeline_errors_total', 'Failed change-log reads, publishes and stream reads.', src.pipelineErrors);
  }

  /** Records one change's fan-out (see {@link FanOutTiming}). */
  fannedOut(t: FanOutTiming): void {
    this.dispatch.observe(t.dispatchMs / 1000);
    if (t.sinceNotifyMs !== undefined) this.notifyToWritten.observe(t.sinceNotifyMs / 1000);
  }
}
