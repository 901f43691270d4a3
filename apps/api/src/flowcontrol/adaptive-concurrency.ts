import { type EventLoopUtilization, monitorEventLoopDelay, performance, type IntervalHistogram } from 'node:perf_hooks';

/** How the replica-wide seat limit adapts to the event loop's delay. */
export interface AdaptiveLimitOptions {
  /** The fewest replica-wide seats: the limit never goes below it (at least 1). */
  min: number;
  /** The most replica-wide seats (PLINTH_MAX_REQUESTS_INFLIGHT): the limit never goes above it. */
  max: number;
  /** Loop delay (ms) above which, with the loop this busy, the limit shrinks; at or below it, a limit that held requests back grows. */
  targetDelayMs: number;
  /**
   * Share of the window the loop was busy (0 to 1) from which the loop
   * counts as saturated: below it, a delay over the target is not the
   * requests' doing (other processes, a pause) and more seats would use
   * idle time (requests waiting on PostgreSQL), so the limit does not shrink.
   */
  targetUtilization: number;
  /**
   * While several tenants are busy (a {@link LoopSample} says `contended`),
   * the delay target instead (default: `targetDelayMs`): when tenants
   * compete, the loop's lateness is the light tenant's latency, and is
   * worth more than a lone flooder's throughput.
   */
  contendedTargetDelayMs?: number;
  /** While several tenants are busy, the fewest seats instead (default: `min`; at least 1, at most `min`). */
  contendedMin?: number;
}

/** The resolution (ms) of the loop delay monitor: an idle loop's mean delay is about this, so targets are above it. */
export const DELAY_RESOLUTION_MS = 5;

/**
 * While tenants compete, the share of the usual lateness target (the delay
 * target above {@link DELAY_RESOLUTION_MS}) the loop may run late: 6 ms of
 * mean delay with the default target of 10. A light tenant's request goes
 * round the loop several times (each await on PostgreSQL), so its latency
 * grows by several times the mean lateness: in one sweep its p99 under a
 * flood was 26–30 ms with 5.5–6.5 ms and 36–40 ms with half the lateness,
 * 7.5 ms (docs/benchmarks.md, issue 29).
 */
export const CONTENDED_LATENESS_SHARE = 0.2;

/** What one window of the event loop showed the controller. */
export interface LoopSample {
  /** The event loop's mean delay over the window, in milliseconds. */
  delayMs: number;
  /** The share of the window the event loop was busy, 0 to 1 (performance.eventLoopUtilization). */
  utilization: number;
  /** Whether the replica-wide limit held a request back during the window (or requests wait for it now). */
  limited: boolean;
  /** Whether a tenant's equal share of the lowered limit, not the limit itself, held a request back during the window. */
  shareLimited?: boolean;
  /** Whether several tenants were busy during the window (then the contended target and floor apply). */
  contended?: boolean;
}

/**
 * The replica-wide seat limit as a function of the event loop's delay,
 * after the additive-increase, multiplicative-decrease limits of TCP
 * congestion control and Netflix's concurrency-limits (AIMD, Gradient):
 * deterministic, fed one {@link LoopSample} per window.
 *
 * - Delay above the target while the loop was busy for at least the
 *   target share of the window: the loop itself has become a queue, so the
 *   limit shrinks in proportion to the overshoot (target ÷ delay, at most
 *   halving in one window) and excess requests wait in the per-tenant fair
 *   queues instead, where the lightest tenant goes first.
 * - Otherwise, while the limit held requests back (or, with the loop busy
 *   less than the target share, tenants' equal shares of it did): one seat more (additive
 *   increase), so throughput comes back as soon as the loop has room, and a
 *   replica whose requests mostly wait on PostgreSQL (loop not saturated)
 *   keeps the seats that overlap those waits; a quarter more when the loop
 *   was busy less than half the target share (the seats are held by
 *   requests waiting elsewhere, e.g. on a slow webhook, and the others
 *   should not wait for them).
 * - Otherwise (the limit is not what bounds the work) it stays.
 *
 * While several tenants are busy (the sample says `contended`), the
 * contended delay target and floor apply instead (with the replica's
 * defaults: a fifth of the lateness above the monitor's resolution, half
 * the floor), so that a light tenant's requests meet a less crowded loop; a
 * lone tenant keeps the usual target and floor, and when contention ends
 * the limit is raised to the usual floor at once.
 *
 * The limit stays within [min, max] whatever the samples; a sample that is
 * not a finite number leaves it unchanged.
 */
export class AdaptiveLimit {
  private current: number;

  /** Starts at `max` (today's static limit), so an idle replica behaves as without adaptation. */
  constructor(private readonly options: AdaptiveLimitOptions) {
    if (!(options.min >= 1) || !(options.max >= options.min)) throw new Error(`adaptive concurrency: need 1 <= min (${options.min}) <= max (${options.max})`);
    this.current = options.max;
  }

  /** The limit now (an integer within [min, max]). */
  get limit(): number {
    return this.current;
  }

  /** Feeds one window's sample; returns the new limit. Mutates only this controller. */
  update(sample: LoopSample): number {
    const { max } = this.options;
    const min = sample.contended ? Math.max(1, Math.min(this.options.min, this.options.contendedMin ?? this.options.min)) : this.options.min;
    const targetDelayMs = sample.contended ? (this.options.contendedTargetDelayMs ?? this.options.targetDelayMs) : this.options.targetDelayMs;
    if (!Number.isFinite(sample.delayMs) || sample.delayMs < 0 || !(sample.utilization >= 0)) return this.current;
    // Contention over: back up to the usual floor at once.
    this.current = Math.max(this.current, min);
    if (sample.delayMs > targetDelayMs && sample.utilization >= this.options.targetUtilization) {
      const gradient = Math.max(0.5, targetDelayMs / sample.delayMs);
      this.current = Math.max(min, Math.min(this.current - 1, Math.floor(this.current * gradient)));
    } else if (sample.limited || (sample.shareLimited && sample.utilization < this.options.targetUtilization)) {
      // Requests held back only by their tenants' shares grow the limit only while the loop has idle time to
      // give: on a saturated loop, more seats would only widen the flooder's share.
      // A mostly idle loop with requests held back: the seats are taken by requests waiting on something else
      // (PostgreSQL, a slow webhook), so grow by a quarter rather than one seat per window.
      const idle = sample.utilization < this.options.targetUtilization / 2;
      this.current = Math.min(max, idle ? Math.max(this.current + 1, Math.ceil(this.current * 1.25)) : this.current + 1);
    }
    return this.current;
  }
}

/** Where the controller reads saturation from and writes the limit to (FairQueuing). */
export interface SeatLimitTarget {
  /** Whether the replica-wide limit held a request back since the previous call (or one waits for it now); resets the mark. */
  takeLimited(): boolean;
  /** Whether a tenant's equal share of the lowered limit held a request back since the previous call; resets the mark. */
  takeShareLimited(): boolean;
  /** Whether several tenants were busy since the previous call (or are now); resets the mark. */
  takeContended(): boolean;
  /** Applies a new replica-wide seat limit (dispatches waiting requests when it grew). */
  setSeatLimit(seats: number): void;
}

/** Reports the limit, the loop delay and the loop's utilization each window (metrics). */
export type AdaptiveObserver = (limit: number, delayMs: number, utilization: number) => void;

/**
 * Drives an {@link AdaptiveLimit} from the event loop: Node's own loop
 * delay monitor (perf_hooks.monitorEventLoopDelay, a libuv timer sampled
 * every `resolutionMs`) is read and reset every `windowMs`, and the new
 * limit goes to `target`. Without a controller (adaptive concurrency off)
 * it only reports the delay, beside the fixed limit. Its timer is unref'd,
 * so it never keeps the process alive; {@link stop} ends it.
 */
export class EventLoopLimiter {
  private readonly histogram: IntervalHistogram;
  private timer?: NodeJS.Timeout;
  private elu?: EventLoopUtilization;

  constructor(
    private readonly controller: AdaptiveLimit | undefined,
    private readonly target: SeatLimitTarget & { readonly currentSeatLimit: number },
    private readonly observe: AdaptiveObserver,
    private readonly windowMs = 100,
    resolutionMs = DELAY_RESOLUTION_MS,
  ) {
    this.histogram = monitorEventLoopDelay({ resolution: resolutionMs });
  }

  /** Starts sampling (idempotent). */
  start(): void {
    if (this.timer) return;
    this.histogram.enable();
    this.elu = performance.eventLoopUtilization();
    this.timer = setInterval(() => this.tick(), this.windowMs);
    this.timer.unref();
  }

  /** Stops sampling (idempotent); the limit stays where it was. */
  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.histogram.disable();
  }

  private tick(): void {
    // No sample in the window (the loop was blocked for all of it): the window's own length is the delay seen.
    const delayMs = this.histogram.count > 0 ? this.histogram.mean / 1e6 : this.windowMs;
    this.histogram.reset();
    const now = performance.eventLoopUtilization();
    const utilization = performance.eventLoopUtilization(now, this.elu).utilization;
    this.elu = now;
    if (!this.controller) {
      this.observe(this.target.currentSeatLimit, delayMs, utilization);
      return;
    }
    const limit = this.controller.update({ delayMs, utilization, limited: this.target.takeLimited(), shareLimited: this.target.takeShareLimited(), contended: this.target.takeContended() });
    this.target.setSeatLimit(limit);
    this.observe(limit, delayMs, utilization);
  }
}
