import { createHash } from 'node:crypto';
import { ApiError, withoutStack } from '@plinth/apimachinery';

/**
 * One request occupies at most a quarter of its tenant's and of the
 * replica's seats, so a wide request never waits for everything else to
 * drain (and never holds everything while it runs).
 */
const MAX_SHARE_OF_SEATS = 4;
/**
 * How long a tenant whose requests have all ended still counts as busy for
 * the equal shares of a lowered limit: a light tenant's clients send their
 * next request a moment after the previous answer, and a flooder must not
 * fill the seats in that gap.
 */
export const SHARE_MEMORY_MS = 250;
/** Queues per tenant among which users are shuffle-sharded. */
const QUEUES = 8;
/** Queues each user is dealt (the shorter one is used). */
const HAND = 2;

/** What one tenant may use on this replica. */
export interface FlowLimits {
  /** Seats its executing requests may occupy at once (a request occupies 1 to 10, see WorkEstimator). */
  concurrency: number;
  /** Requests waiting for a seat, at most (beyond: 429 at once). */
  queueLength: number;
  /** Requests admitted per second (a token bucket with one second of burst); undefined: no rate limit. */
  requestsPerSecond?: number;
}

/** Why a request got 429 from flow control: its tenant's queue was full, it waited too long, its tenant is over its rate, or its tenant's share of validation time is used up. */
export type RejectReason = 'queue-full' | 'timeout' | 'rate' | 'validation-share';

/** How long a request waited and why it was refused, for metrics. */
export interface FlowObserver {
  admitted(tenant: string, waitedSeconds: number): void;
  rejected(tenant: string, reason: RejectReason): void;
  changed(tenant: string, inflight: number, queued: number, seats: number): void;
  /** Writes of `tenant` held until its share of validation time refills (ThrottledWrites). */
  held?(tenant: string, held: number): void;
  /** A request of `tenant` finished: the seats of work its tenant was charged (its actual work, else its width). */
  charged?(tenant: string, seats: number): void;
}

/**
 * Gives a request's seats back (idempotent), with the work it actually did
 * in seats when known, which corrects its tenant's virtual time (as
 * upstream corrects a request's virtual finish time by its actual
 * execution) so that a tenant whose requests turn out expensive is served
 * proportionally less while others wait.
 */
export type ReleaseSeats = (actualSeats?: number) => void;

interface Waiter {
  resolve: (release: ReleaseSeats) => void;
  reject: (err: ApiError) => void;
  timer: NodeJS.Timeout;
  enqueuedAt: number;
  seats: number;
}

interface TenantFlow {
  /** Requests executing. */
  inflight: number;
  /** Seats the executing requests occupy. */
  seats: number;
  queued: number;
  queues: Waiter[][];
  next: number;
  tokens: number;
  refilledAt: number;
  /** Virtual time: seats of work dispatched so far (corrected by the actual work when requests finish). */
  vt: number;
}

/** Upstream's APF refusal: 429 TooManyRequests with Retry-After (built without a stack trace: a flood gets thousands a second). */
export function tooManyRequests(retryAfterSeconds: number): ApiError {
  const seconds = Math.max(1, Math.ceil(retryAfterSeconds));
  return withoutStack(() => new ApiError(429, 'TooManyRequests', 'Too many requests, please try again later.', { retryAfterSeconds: seconds }, { 'Retry-After': String(seconds) }));
}

/** The HAND queue indexes of `user`, from a hash of the name (shuffle sharding: two users rarely share both). */
export function handOf(user: string): number[] {
  const digest = createHash('sha256').update(user).digest();
  const out: number[] = [];
  for (let i = 0; out.length < HAND && i < digest.length; i++) {
    const q = digest[i] % QUEUES;
    if (!out.includes(q)) out.push(q);
  }
  return out;
}

/**
 * Per-tenant fair queuing on one replica, after API Priority and Fairness:
 * each tenant has its own seats (so a flooding tenant waits for its own
 * seats, never for another tenant's), a bounded number of waiting requests
 * spread over queues by shuffle sharding over users and served round-robin
 * (so one user of a tenant cannot starve the tenant's other users), a
 * longest wait, and optionally a rate; what does not fit gets 429 with
 * Retry-After, which kubectl, client-go and client-node retry.
 *
 * A request occupies as many seats as its estimated work (its width, 1 by
 * default). Replica-wide seats are shared between tenants by virtual time,
 * as upstream's fair queuing: each tenant's virtual time advances by the
 * seats it is given and is corrected by the work its requests actually did,
 * and a freed seat goes to the waiting tenant that is furthest behind. A
 * tenant that was idle starts at the virtual time of the busiest-served
 * tenant's oldest unfinished work, so idleness earns no credit. While
 * adaptive concurrency holds the replica-wide limit below its total, each
 * busy tenant may hold at most an equal share of it (see withinShare).
 */
export class FairQueuing {
  /** One entry per tenant that sent an authorized request here (bounded by the tenants that exist). */
  private readonly flows = new Map<string, TenantFlow>();
  /** Tenants with requests waiting for a seat. */
  private readonly waiting = new Set<string>();
  /** Tenants with requests executing or waiting. */
  private readonly active = new Set<string>();
  /** Tenants that went idle less than SHARE_MEMORY_MS ago, with when (pruned as they expire or come back). */
  private readonly recentlyIdle = new Map<string, number>();
  private seatsTotal = 0;
  /**
   * The system's virtual time: the least virtual start of the busy
   * tenants' unfinished work, and when none is busy, the virtual time of
   * the last tenant that was; it never goes back, so a tenant arriving at
   * an idle replica starts where the last busy one left off, not behind it.
   */
  private systemVt = 0;
  /** The replica-wide seat limit now: `totalSeats`, or less while adaptive concurrency has lowered it (setSeatLimit). */
  private seatLimit: number;
  /** Whether the replica-wide limit held a request back since takeLimited() was last called. */
  private limited = false;
  /** Whether a tenant's share of the lowered limit held a request back since takeShareLimited() was last called. */
  private shareLimited = false;
  /** Whether several tenants were busy since takeContended() was last called. */
  private contended = false;

  /**
   * `totalSeats` bounds the seats executing requests occupy on the
   * replica, all tenants together (0: only the per-tenant bounds): when
   * they are taken, a freed seat goes to the waiting tenant with the least
   * virtual time (ties: the fewest seats executing), so a tenant sending
   * expensive requests cannot hold the replica's CPU while another waits.
   */
  constructor(
    private readonly limitsOf: (tenant: string) => FlowLimits,
    private readonly waitMs: number,
    private readonly observer: FlowObserver,
    private readonly totalSeats = 0,
    /** The clock (ms) of the shares' memory of busy tenants; tests pass their own. */
    private readonly now: () => number = () => performance.now(),
  ) {
    this.seatLimit = totalSeats;
  }

  /**
   * Sets the replica-wide seat limit (adaptive concurrency), within 1 and
   * the configured total; ignored when there is no replica-wide limit
   * (totalSeats 0). Requests already executing keep their seats when it
   * shrinks; waiting ones are dispatched at once when it grows.
   */
  setSeatLimit(seats: number): void {
    if (this.totalSeats === 0) return;
    const next = Math.max(1, Math.min(this.totalSeats, Math.floor(seats)));
    if (next === this.seatLimit) return;
    const grew = next > this.seatLimit;
    this.seatLimit = next;
    if (grew) this.dispatch();
  }

  /** The replica-wide seat limit now (0: none). */
  get currentSeatLimit(): number {
    return this.seatLimit;
  }

  /**
   * Whether the replica-wide limit held a request back since the previous
   * call, or a request under its tenant's bound waits for it now; resets
   * the mark (read by adaptive concurrency once per window).
   */
  takeLimited(): boolean {
    const was = this.limited || this.othersCanRun();
    this.limited = false;
    return was;
  }

  /**
   * Whether a tenant's equal share of the lowered limit (not the limit
   * itself) held a request back since the previous call, or holds one back
   * now; resets the mark (read by adaptive concurrency once per window).
   */
  takeShareLimited(): boolean {
    // othersCanRun() marks a request its tenant's share holds back now.
    this.othersCanRun();
    const was = this.shareLimited;
    this.shareLimited = false;
    return was;
  }

  /**
   * Whether several tenants were busy (counting those idle for less than
   * SHARE_MEMORY_MS) since the previous call, or are now; resets the mark
   * (read by adaptive concurrency once per window).
   */
  takeContended(): boolean {
    const was = this.contended || this.busyTenants() >= 2;
    this.contended = false;
    return was;
  }

  /**
   * Resolves with the function that gives the seats back once `user`'s
   * request in `tenant`, occupying `width` seats (at most a quarter of the
   * tenant's and of the replica's), may run; rejects with a 429 ApiError
   * when the tenant's rate, queue or longest wait refuses it.
   */
  admit(tenant: string, user: string, width = 1): Promise<ReleaseSeats> {
    const limits = this.limitsOf(tenant);
    const flow = this.flow(tenant);
    const rateWait = this.takeToken(flow, limits);
    if (rateWait > 0) {
      this.observer.rejected(tenant, 'rate');
      return Promise.reject(tooManyRequests(rateWait));
    }
    const seats = Math.max(1, Math.min(Math.ceil(width), Math.floor(Math.min(limits.concurrency, this.seatLimit || Infinity) / MAX_SHARE_OF_SEATS)));
    this.activate(tenant, flow);
    if (flow.queued === 0 && flow.seats + seats <= limits.concurrency && !this.othersCanRun()) {
      if (!this.globalSeatsFree(seats)) this.limited = true;
      else if (!this.withinShare(flow, seats)) this.shareLimited = true;
      else return Promise.resolve(this.seat(tenant, flow, seats, 0));
    }
    if (flow.queued >= limits.queueLength) {
      this.observer.rejected(tenant, 'queue-full');
      this.deactivateIfIdle(tenant, flow);
      // One busy tenant fewer may widen the others' shares of a lowered limit.
      this.dispatch();
      return Promise.reject(tooManyRequests(1));
    }
    return new Promise((resolve, reject) => {
      const queue = handOf(user)
        .map((i) => flow.queues[i])
        .reduce((a, b) => (b.length < a.length ? b : a));
      const waiter: Waiter = {
        resolve,
        reject,
        seats,
        enqueuedAt: performance.now(),
        timer: setTimeout(() => {
          const at = queue.indexOf(waiter);
          if (at < 0) return;
          queue.splice(at, 1);
          flow.queued--;
          if (flow.queued === 0) this.waiting.delete(tenant);
          this.deactivateIfIdle(tenant, flow);
          this.observer.rejected(tenant, 'timeout');
          this.observer.changed(tenant, flow.inflight, flow.queued, flow.seats);
          reject(tooManyRequests(1));
          // The head may have been the request that did not fit: others may now.
          this.dispatch();
        }, this.waitMs),
      };
      queue.push(waiter);
      flow.queued++;
      this.waiting.add(tenant);
      this.observer.changed(tenant, flow.inflight, flow.queued, flow.seats);
      this.dispatch();
    });
  }

  /** Requests of `tenant` executing and waiting on this replica. */
  stats(tenant: string): { inflight: number; queued: number } {
    const f = this.flows.get(tenant);
    return { inflight: f?.inflight ?? 0, queued: f?.queued ?? 0 };
  }

  /** Counts a 429 given before admission for a reason of its own (metrics). */
  noteRejected(tenant: string, reason: RejectReason): void {
    this.observer.rejected(tenant, reason);
  }

  /** Seats the executing requests of `tenant` occupy on this replica. */
  seatsOf(tenant: string): number {
    return this.flows.get(tenant)?.seats ?? 0;
  }

  private flow(tenant: string): TenantFlow {
    let f = this.flows.get(tenant);
    if (!f) {
      f = { inflight: 0, seats: 0, queued: 0, queues: Array.from({ length: QUEUES }, () => []), next: 0, tokens: Number.NaN, refilledAt: performance.now(), vt: 0 };
      this.flows.set(tenant, f);
    }
    return f;
  }

  /**
   * Marks `tenant` busy; if it was idle, moves its virtual time up to the
   * system's (the least virtual start of the other busy tenants' unfinished
   * work, or, when none is busy, where the last busy tenant left off), so
   * time spent idle is not saved up to crowd out others later, and a tenant
   * that arrives at an idle replica does not start far behind the tenant
   * that was just running (which would then wait for it to catch up).
   */
  private activate(tenant: string, f: TenantFlow): void {
    if (this.active.has(tenant)) return;
    let now = Infinity;
    for (const t of this.active) {
      const o = this.flows.get(t)!;
      now = Math.min(now, o.vt - o.seats);
    }
    if (now !== Infinity) this.systemVt = Math.max(this.systemVt, now);
    f.vt = Math.max(f.vt, this.systemVt);
    this.active.add(tenant);
    this.recentlyIdle.delete(tenant);
    if (this.active.size >= 2) this.contended = true;
  }

  private deactivateIfIdle(tenant: string, f: TenantFlow): void {
    if (f.inflight !== 0 || f.queued !== 0) return;
    this.active.delete(tenant);
    if (this.seatLimit < this.totalSeats) this.recentlyIdle.set(tenant, this.now());
    if (this.active.size === 0) this.systemVt = Math.max(this.systemVt, f.vt);
  }

  /** Takes one token of the tenant's rate; returns 0, or the seconds until one is due. */
  private takeToken(f: TenantFlow, limits: FlowLimits): number {
    const rate = limits.requestsPerSecond;
    if (!rate) return 0;
    const now = performance.now();
    f.tokens = Number.isNaN(f.tokens) ? rate : Math.min(rate, f.tokens + ((now - f.refilledAt) / 1000) * rate);
    f.refilledAt = now;
    if (f.tokens >= 1) {
      f.tokens -= 1;
      return 0;
    }
    return (1 - f.tokens) / rate;
  }

  /**
   * Whether `seats` replica-wide seats are free. With nothing executing,
   * any request may run: a request admitted as wider than a limit that
   * shrank since never waits for ever.
   */
  private globalSeatsFree(seats: number): boolean {
    return this.totalSeats === 0 || this.seatsTotal === 0 || this.seatsTotal + seats <= this.seatLimit;
  }

  /**
   * Whether `f` may take `seats` more within its equal share of a lowered
   * replica-wide limit. While adaptive concurrency holds the limit below
   * the configured total (the event loop is saturated) and several tenants
   * are busy, each may hold at most `ceil(limit / busy tenants)` seats, so
   * a flooder cannot fill every seat of the lowered limit: the seats it
   * leaves are kept for the other tenants' next requests, which then start
   * at once instead of after one of its requests ends, and the loop runs
   * fewer of its requests beside theirs. A tenant counts as busy until
   * SHARE_MEMORY_MS after its last request ended. A tenant holding no seat may
   * always start one request (a request may be wider than a share when
   * many tenants are busy). Not work-conserving on purpose: the limit was
   * lowered because the loop had more work than it could serve promptly.
   */
  private withinShare(f: TenantFlow, seats: number): boolean {
    if (this.totalSeats === 0 || this.seatLimit >= this.totalSeats || f.seats === 0) return true;
    const busy = this.busyTenants();
    return busy < 2 || f.seats + seats <= Math.ceil(this.seatLimit / busy);
  }

  /** Tenants busy now or within the last SHARE_MEMORY_MS (forgets those idle for longer). */
  private busyTenants(): number {
    if (this.recentlyIdle.size > 0) {
      const since = this.now() - SHARE_MEMORY_MS;
      for (const [t, at] of this.recentlyIdle) if (at < since) this.recentlyIdle.delete(t);
    }
    return this.active.size + this.recentlyIdle.size;
  }

  /** Whether a waiting tenant, under its own bound, is owed the free seats before a new arrival. */
  private othersCanRun(): boolean {
    for (const t of this.waiting) if (this.head(t) !== undefined) return true;
    return false;
  }

  /** The seats of the request `tenant` would run next, if its own bound lets it run now. */
  private head(tenant: string): number | undefined {
    const f = this.flows.get(tenant)!;
    for (let i = 0; i < QUEUES; i++) {
      const q = f.queues[(f.next + i) % QUEUES];
      if (q.length === 0) continue;
      if (f.seats + q[0].seats > this.limitsOf(tenant).concurrency) return undefined;
      if (this.withinShare(f, q[0].seats)) return q[0].seats;
      // Held back by its share of the lowered limit, which adaptive concurrency raises only while the loop has room.
      this.shareLimited = true;
      return undefined;
    }
    return undefined;
  }

  private seat(tenant: string, f: TenantFlow, seats: number, waitedMs: number): ReleaseSeats {
    f.inflight++;
    f.seats += seats;
    f.vt += seats;
    this.seatsTotal += seats;
    this.observer.admitted(tenant, waitedMs / 1000);
    this.observer.changed(tenant, f.inflight, f.queued, f.seats);
    let released = false;
    return (actualSeats) => {
      if (released) return;
      released = true;
      f.inflight--;
      f.seats -= seats;
      this.seatsTotal -= seats;
      const actual = actualSeats !== undefined && Number.isFinite(actualSeats) ? Math.max(0, actualSeats) : seats;
      f.vt += actual - seats;
      this.observer.charged?.(tenant, actual);
      this.deactivateIfIdle(tenant, f);
      this.dispatch();
      this.observer.changed(tenant, f.inflight, f.queued, f.seats);
    };
  }

  /**
   * Gives free seats to waiting requests: to the waiting tenant with the
   * least virtual time among those under their own bound (ties: fewest
   * seats executing), and inside it to its queues round-robin. When that
   * tenant's next request needs more seats than are free, nothing else is
   * dispatched until enough are (as upstream: a wide request is not
   * overtaken forever by narrow ones).
   */
  private dispatch(): void {
    while (this.waiting.size > 0) {
      let best: [string, TenantFlow, number] | undefined;
      for (const t of this.waiting) {
        const seats = this.head(t);
        if (seats === undefined) continue;
        const f = this.flows.get(t)!;
        if (!best || f.vt < best[1].vt || (f.vt === best[1].vt && f.seats < best[1].seats)) best = [t, f, seats];
      }
      if (!best) return;
      if (!this.globalSeatsFree(best[2])) {
        this.limited = true;
        return;
      }
      const [tenant, f, seats] = best;
      let queue = f.queues[f.next];
      for (let i = 0; queue.length === 0 && i < QUEUES; i++) {
        f.next = (f.next + 1) % QUEUES;
        queue = f.queues[f.next];
      }
      f.next = (f.next + 1) % QUEUES;
      const waiter = queue.shift()!;
      f.queued--;
      if (f.queued === 0) this.waiting.delete(tenant);
      clearTimeout(waiter.timer);
      waiter.resolve(this.seat(tenant, f, seats, performance.now() - waiter.enqueuedAt));
    }
  }
}
