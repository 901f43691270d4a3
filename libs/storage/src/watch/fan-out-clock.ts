import { performance } from 'node:perf_hooks';

/** How long one change took to reach every watcher of this replica, reported once it was written to the last. */
export interface FanOutTiming {
  /** Watchers of the change's bucket it was handed to. */
  subscribers: number;
  /** Milliseconds from the change entering the watch cache to its write to the last watcher's connection. */
  dispatchMs: number;
  /**
   * Milliseconds from the commit's NOTIFY reaching this replica to the same
   * last write; undefined where no NOTIFY of it arrived (a replica that is
   * not the relay, or a change found by the poll).
   */
  sinceNotifyMs: number | undefined;
}

/** NOTIFY arrival times kept for changes not yet dispatched; past this many, the oldest are forgotten. */
const MAX_PENDING = 4096;

/**
 * Times the watch path of each change: when its NOTIFY arrived (≈ its
 * commit) and when the cache handed it to its watchers, for the fan-out
 * metrics. Costs a map entry per NOTIFY and a clock read per dispatch.
 */
export class FanOutClock {
  private readonly notified = new Map<number, number>();

  constructor(private readonly report: (timing: FanOutTiming) => void) {}

  /** The NOTIFY of `revision` arrived now. */
  notify(revision: number): void {
    if (this.notified.size >= MAX_PENDING) this.notified.delete(this.notified.keys().next().value as number);
    this.notified.set(revision, performance.now());
  }

  /** The change at `revision` was written to its `subscribers` watchers, the first write starting at `startedAt` (performance.now()). */
  dispatched(revision: number, subscribers: number, startedAt: number): void {
    const now = performance.now();
    let sinceNotify: number | undefined;
    // NOTIFYs arrive in commit (= revision) order, so the entries at or below this revision are the oldest ones.
    for (const [rev, at] of this.notified) {
      if (rev > revision) break;
      if (rev === revision) sinceNotify = now - at;
      this.notified.delete(rev);
    }
    this.report({ subscribers, dispatchMs: now - startedAt, sinceNotifyMs: sinceNotify });
  }
}
