import { createHash } from 'node:crypto';
import { ApiError } from '@plinth/apimachinery';

/** Queues per tenant among which users are shuffle-sharded. */
const QUEUES = 8;
/** Queues each user is dealt (the shorter one is used). */
const HAND = 2;

/** What one tenant may use on this replica. */
export interface FlowLimits {
  /** Requests executing at once. */
  concurrency: number;
  /** Requests waiting for a seat, at most (beyond: 429 at once). */
  queueLength: number;
  /** Requests admitted per second (a token bucket with one second of burst); undefined: no rate limit. */
  requestsPerSecond?: number;
}

/** How long a request waited and why it was refused, for metrics. */
export interface FlowObserver {
  admitted(tenant: string, waitedSeconds: number): void;
  rejected(tenant: string, reason: 'queue-full' | 'timeout' | 'rate'): void;
  changed(tenant: string, inflight: number, queued: number): void;
}

interface Waiter {
  resolve: (release: () => void) => void;
  reject: (err: ApiError) => void;
  timer: NodeJS.Timeout;
  enqueuedAt: number;
}

interface TenantFlow {
  inflight: number;
  queued: number;
  queues: Waiter[][];
  next: number;
  tokens: number;
  refilledAt: number;
}

/** Upstream's APF refusal: 429 TooManyRequests with Retry-After. */
export function tooManyRequests(retryAfterSeconds: number): ApiError {
  const seconds = Math.max(1, Math.ceil(retryAfterSeconds));
  return new ApiError(429, 'TooManyRequests', 'Too many requests, please try again later.', { retryAfterSeconds: seconds }, { 'Retry-After': String(seconds) });
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
 */
export class FairQueuing {
  /** One entry per tenant that sent an authorized request here (bounded by the tenants that exist). */
  private readonly flows = new Map<string, TenantFlow>();
  /** Tenants with requests waiting for a seat. */
  private readonly waiting = new Set<string>();
  private inflightTotal = 0;

  /**
   * `totalSeats` bounds the requests executing at once on the replica, all
   * tenants together (0: only the per-tenant bounds): when they are taken,
   * a freed seat goes to the waiting tenant with the fewest requests
   * executing, so a flooding tenant cannot hold the replica's CPU while
   * another waits.
   */
  constructor(
    private readonly limitsOf: (tenant: string) => FlowLimits,
    private readonly waitMs: number,
    private readonly observer: FlowObserver,
    private readonly totalSeats = 0,
  ) {}

  /**
   * Resolves with the function that gives the seat back once `user`'s
   * request in `tenant` may run; rejects with a 429 ApiError when the
   * tenant's rate, queue or longest wait refuses it.
   */
  admit(tenant: string, user: string): Promise<() => void> {
    const limits = this.limitsOf(tenant);
    const flow = this.flow(tenant);
    const rateWait = this.takeToken(flow, limits);
    if (rateWait > 0) {
      this.observer.rejected(tenant, 'rate');
      return Promise.reject(tooManyRequests(rateWait));
    }
    if (flow.inflight < limits.concurrency && flow.queued === 0 && this.globalSeatFree()) return Promise.resolve(this.seat(tenant, flow, 0));
    if (flow.queued >= limits.queueLength) {
      this.observer.rejected(tenant, 'queue-full');
      return Promise.reject(tooManyRequests(1));
    }
    return new Promise((resolve, reject) => {
      const queue = handOf(user)
        .map((i) => flow.queues[i])
        .reduce((a, b) => (b.length < a.length ? b : a));
      const waiter: Waiter = {
        resolve,
        reject,
        enqueuedAt: performance.now(),
        timer: setTimeout(() => {
          const at = queue.indexOf(waiter);
          if (at < 0) return;
          queue.splice(at, 1);
          flow.queued--;
          if (flow.queued === 0) this.waiting.delete(tenant);
          this.observer.rejected(tenant, 'timeout');
          this.observer.changed(tenant, flow.inflight, flow.queued);
          reject(tooManyRequests(1));
        }, this.waitMs),
      };
      queue.push(waiter);
      flow.queued++;
      this.waiting.add(tenant);
      this.observer.changed(tenant, flow.inflight, flow.queued);
      this.dispatch();
    });
  }

  /** Requests of `tenant` executing and waiting on this replica. */
  stats(tenant: string): { inflight: number; queued: number } {
    const f = this.flows.get(tenant);
    return { inflight: f?.inflight ?? 0, queued: f?.queued ?? 0 };
  }

  private flow(tenant: string): TenantFlow {
    let f = this.flows.get(tenant);
    if (!f) {
      f = { inflight: 0, queued: 0, queues: Array.from({ length: QUEUES }, () => []), next: 0, tokens: Number.NaN, refilledAt: performance.now() };
      this.flows.set(tenant, f);
    }
    return f;
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
   * Whether a replica-wide seat is free. A new arrival may take it: every
   * release and every arrival hands free seats to waiting tenants that can
   * use them first ({@link dispatch}), so any tenant still waiting is at its
   * own bound.
   */
  private globalSeatFree(): boolean {
    return this.totalSeats === 0 || this.inflightTotal < this.totalSeats;
  }

  private seat(tenant: string, f: TenantFlow, waitedMs: number): () => void {
    f.inflight++;
    this.inflightTotal++;
    this.observer.admitted(tenant, waitedMs / 1000);
    this.observer.changed(tenant, f.inflight, f.queued);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      f.inflight--;
      this.inflightTotal--;
      this.dispatch();
      this.observer.changed(tenant, f.inflight, f.queued);
    };
  }

  /**
   * Gives free seats to waiting requests: while a replica-wide seat is free,
   * to the waiting tenant with the fewest requests executing (among those
   * under their own bound), and inside it to its queues round-robin.
   */
  private dispatch(): void {
    while (this.waiting.size > 0 && (this.totalSeats === 0 || this.inflightTotal < this.totalSeats)) {
      let best: [string, TenantFlow] | undefined;
      for (const t of this.waiting) {
        const f = this.flows.get(t)!;
        if (f.inflight >= this.limitsOf(t).concurrency) continue;
        if (!best || f.inflight < best[1].inflight) best = [t, f];
      }
      if (!best) return;
      const [tenant, f] = best;
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
      waiter.resolve(this.seat(tenant, f, performance.now() - waiter.enqueuedAt));
    }
  }
}
