import { Counter, Gauge, type Registry } from 'prom-client';

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
}

/** The watch path's Prometheus metrics, registered on the server's registry. */
export class WatchMetrics {
  readonly eventsSent: Counter;
  readonly slowClosed: Counter;
  readonly opened: Counter;

  constructor(registry: Registry, src: WatchMetricsSource) {
    const registers = [registry];
    this.eventsSent = new Counter({ name: 'plinth_watch_events_sent_total', help: 'Watch events written to watchers.', registers });
    this.slowClosed = new Counter({
      name: 'plinth_watch_slow_consumers_closed_total',
      help: 'Watches closed because the client did not keep up (its buffer overflowed).',
      registers,
    });
    this.opened = new Counter({ name: 'plinth_watch_opened_total', help: 'Watches started.', registers });
    const gauge = (name: string, help: string, read: () => number) =>
      new Gauge({
        name,
        help,
        registers,
        collect() {
          this.set(read());
        },
      });
    gauge('plinth_watchers', 'Open watches on this replica.', src.watchers);
    gauge('plinth_watch_cache_revision', 'Newest revision in the watch cache.', src.cacheRevision);
    gauge('plinth_watch_cache_oldest_resumable_revision', 'Oldest revision a watch can resume from without PostgreSQL.', src.cacheOldestResumable);
    gauge('plinth_watch_cache_events', 'Changes held by the watch cache window.', src.cacheLength);
    gauge('plinth_watch_relay_leader', '1 when this replica runs the watch relay.', () => (src.isRelay() ? 1 : 0));
    gauge('plinth_watch_compaction_lag_seconds', 'How far the oldest kept change is past the retention.', src.compactionLagSeconds);
    gauge('plinth_watch_compacted_revision', 'Changes at or below this revision may be gone.', src.compactedRevision);
    gauge('plinth_watch_fanout_degraded', '1 while Redis is unreachable and changes reach watchers through the PostgreSQL fallback.', src.degraded);
    // Counters kept by the pipeline, exposed as Prometheus counters that catch up when scraped.
    const counter = (name: string, help: string, read: () => number) => {
      let seen = 0;
      return new Counter({
        name,
        help,
        registers,
        collect() {
          const now = read();
          if (now > seen) this.inc(now - seen);
          seen = now;
        },
      });
    };
    counter('plinth_watch_compacted_changes_total', 'Changes deleted by compaction on this replica.', src.compactedTotal);
    counter('plinth_watch_backfilled_changes_total', 'Changes read from PostgreSQL to fill holes in the stream.', src.backfilled);
    counter('plinth_watch_streamed_changes_total', 'Changes received from the Redis stream (cluster mode).', src.streamed);
    counter('plinth_watch_pipeline_errors_total', 'Failed change-log reads, publishes and stream reads.', src.pipelineErrors);
  }
}
