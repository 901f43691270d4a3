import { ApiError, withoutStack } from '@plinth/apimachinery';
import { LRUCache } from 'lru-cache';

/** The 429 of a tenant whose share of validation time is used up; `Retry-After` the seconds until it has refilled (at least 1). Built without a stack trace (a flood gets thousands a second). */
export function validationShareUsedUp(secondsToRefill: number): ApiError {
  const seconds = Math.max(1, Math.ceil(secondsToRefill));
  return withoutStack(
    () =>
      new ApiError(
        429,
        'TooManyRequests',
        'Too many requests, please try again later: the tenant has used its share of validation time (expensive validation rules)',
        { retryAfterSeconds: seconds },
        { 'Retry-After': String(seconds) },
      ),
  );
}

/** Options of {@link TenantValidationBudget}. */
export interface ValidationBudgetOptions {
  /** Sustained validation time a tenant may spend, in ms per second of wall time. */
  msPerSecond: number;
  /** What a tenant may spend at once after being idle (ms). */
  burstMs: number;
}

interface Bucket {
  balance: number;
  at: number;
}

/**
 * Fairness for expensive validation (CEL rules, schema patterns): a token
 * bucket of validation time per tenant. Each custom-resource validation is
 * charged the time it held the event loop plus the time a CEL worker spent
 * on its rules (admission policies: their evaluation's wall time); a tenant
 * whose bucket is empty gets 429 TooManyRequests with `Retry-After` until
 * it refills, so one tenant submitting rules at the cost limit cannot take
 * the CPU (or, for what runs inline, the event loop) from the others.
 * Buckets of the 10,000 most recent tenants are kept.
 */
export class TenantValidationBudget {
  private readonly buckets = new LRUCache<string, Bucket>({ max: 10_000 });

  constructor(private readonly opts: ValidationBudgetOptions) {}

  /** Throws ApiError 429 when `tenant` has no validation time left right now. */
  check(tenant: string, now = performance.now()): void {
    const b = this.refill(tenant, now);
    if (b.balance > 0) return;
    throw validationShareUsedUp(-b.balance / this.opts.msPerSecond);
  }

  /** Milliseconds until `tenant` has validation time left (0: it has some now). */
  msUntilAvailable(tenant: string, now = performance.now()): number {
    const b = this.refill(tenant, now);
    return b.balance > 0 ? 0 : (-b.balance * 1000) / this.opts.msPerSecond + 1;
  }

  /** Charges `ms` of validation time to `tenant` (the balance may go negative: the next check waits it out). */
  charge(tenant: string, ms: number, now = performance.now()): void {
    const b = this.refill(tenant, now);
    b.balance -= ms;
  }

  /** Runs `fn` after check(), charging its wall time. */
  run<T>(tenant: string, fn: () => T): T {
    this.check(tenant);
    const started = performance.now();
    try {
      return fn();
    } finally {
      this.charge(tenant, performance.now() - started);
    }
  }

  /**
   * Runs `fn` after check(), charging the time it holds the event loop (up
   * to the moment it returns or first awaits); what it awaits (a worker's
   * evaluation) is charged by whoever does that work.
   */
  async runAsync<T>(tenant: string, fn: () => T | Promise<T>): Promise<T> {
    this.check(tenant);
    const started = performance.now();
    let pending: T | Promise<T>;
    try {
      pending = fn();
    } finally {
      this.charge(tenant, performance.now() - started);
    }
    return pending;
  }

  private refill(tenant: string, now: number): Bucket {
    let b = this.buckets.get(tenant);
    if (!b) {
      b = { balance: this.opts.burstMs, at: now };
      this.buckets.set(tenant, b);
      return b;
    }
    b.balance = Math.min(this.opts.burstMs, b.balance + ((now - b.at) / 1000) * this.opts.msPerSecond);
    b.at = now;
    return b;
  }
}
