import { setImmediate as immediate, setTimeout as sleep } from 'node:timers/promises';

/** How a {@link SnapshotPacer} spaces its work. */
export interface PacerOptions {
  /** The share of wall time the work may take (0 < duty ≤ 1): after a unit of work of t ms it rests t·(1/duty − 1) ms. */
  duty: number;
  /** The longest the work runs on the event loop before it lets other callbacks run (ms). */
  sliceMs: number;
  /** An event loop later than this (ms) at a rest's end counts as busy: the next rests are doubled (at most {@link PacerOptions.maxStretch} times as long), up to {@link PacerOptions.maxRestMs}. */
  lateMs: number;
  /** The most a busy event loop stretches the rests. */
  maxStretch: number;
  /** The longest rest (ms). */
  maxRestMs: number;
}

/**
 * Defaults of snapshot work (docs/snapshots.md, "Other tenants while a snapshot runs"): half of the time, 2 ms slices,
 * rests up to twice as long while the event loop is more than 20 ms late, at most 100 ms at a time.
 */
export const SNAPSHOT_PACE: PacerOptions = { duty: 0.5, sliceMs: 2, lateMs: 20, maxStretch: 2, maxRestMs: 100 };

/**
 * Paces low-priority work (a tenant's export or restore) so that the
 * requests of every other tenant on the server and its shard keep their
 * latency: the work gives the event loop back every {@link PacerOptions.sliceMs}
 * ({@link step}), and after each unit that used the database (a page read,
 * a batch written) rests in proportion to it ({@link rest}), longer while
 * the event loop is late (other work is waiting: the pacer measures how
 * late its own timers fire, weighted by how busy the event loop was
 * meanwhile). Not shared between works: one per export or
 * restore. Never throws.
 */
export class SnapshotPacer {
  private sliceStart = performance.now();
  private stretch = 1;
  /** Milliseconds spent resting, for the log and tests. */
  rested = 0;

  constructor(private readonly options: PacerOptions = SNAPSHOT_PACE) {}

  /** Lets other callbacks run when the current slice of work has taken its time; cheap to call often. */
  async step(): Promise<void> {
    if (performance.now() - this.sliceStart < this.options.sliceMs) return;
    await immediate();
    this.sliceStart = performance.now();
  }

  /**
   * Rests after a unit of work that took `workMs` (wall time, the
   * database's included): `workMs·(1/duty − 1)`, times a stretch that
   * doubles while the event loop is late and halves back once it is not.
   */
  async rest(workMs: number): Promise<void> {
    const { duty, lateMs, maxRestMs } = this.options;
    const wanted = Math.min(maxRestMs, Math.max(0, workMs) * (1 / duty - 1) * this.stretch);
    const t0 = performance.now();
    const elu0 = performance.eventLoopUtilization();
    if (wanted >= 1) await sleep(wanted);
    else await immediate();
    const took = performance.now() - t0;
    // How long after it was due the rest's timer fired, counted only while this server's own event loop was busy
    // meanwhile (its other requests): a host busy with other processes makes timers late too, and is not a reason to rest.
    const busy = performance.eventLoopUtilization(elu0).utilization;
    const late = (took - wanted) * busy;
    this.rested += took;
    this.stretch = late > lateMs ? Math.min(this.stretch * 2, this.options.maxStretch) : Math.max(1, this.stretch / 2);
    this.sliceStart = performance.now();
  }

  /** Runs `unit` and rests in proportion to its duration; returns its result. */
  async paced<T>(unit: () => Promise<T>): Promise<T> {
    const t0 = performance.now();
    const out = await unit();
    await this.rest(performance.now() - t0);
    return out;
  }
}

/**
 * Sizes the batches of a restore so that each holds the shard's revision
 * counter about `targetMs`: halves the size after a slower batch, grows it
 * by a quarter after a faster one, within [min, max]. Pure arithmetic, no
 * timers.
 */
export class BatchSizer {
  size: number;

  constructor(
    private readonly targetMs: number,
    private readonly min: number,
    private readonly max: number,
  ) {
    this.size = min;
  }

  /** Records that a batch of `n` objects took `ms`; returns the next size. */
  observe(n: number, ms: number): number {
    if (n >= this.size && ms < this.targetMs) this.size = Math.min(this.max, Math.ceil(this.size * 1.25));
    else if (ms > this.targetMs * 1.5) this.size = Math.max(this.min, Math.floor(this.size / 2));
    return this.size;
  }
}
