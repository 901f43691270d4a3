import { LRUCache } from 'lru-cache';
import type { ApiError } from '@plinth/apimachinery';
import { validationShareUsedUp } from '../admission/validation-budget.js';
import { tooManyRequests } from './fair-queuing.js';

/** What refuses a tenant's writes while its share of validation time is used up (TenantValidationBudget). */
export interface ValidationShare {
  /** Milliseconds until `tenant` has validation time left (0: it has some now). */
  msUntilAvailable(tenant: string): number;
}

/** Bounds of the hold: writes held per tenant at most (beyond: 429 at once), and the longest hold (then 429). */
export interface HoldLimits {
  queueLength: number;
  waitMs: number;
}

/** Why a write was not let through: its tenant's hold queue was full, or its hold ran out. */
export type HoldRefusal = { reason: 'queue-full' | 'timeout'; error: ApiError };

/** What a write that was held, then let through, calls once it has finished (any way): the tenant's next held write may go. */
export type HoldDone = () => void;

const WRITES = new Set(['POST', 'PUT', 'PATCH']);
/** The longest a tenant's hold sleeps before it looks at the share again. */
const MAX_WAKE_MS = 1000;

interface Held {
  settle: (outcome: HoldDone | HoldRefusal) => void;
}

interface TenantHold {
  queue: Held[];
  /** Held writes let through and not yet finished (at most one). */
  running: number;
  /** The wake-up once the share has refilled. */
  wake?: NodeJS.Timeout;
}

/**
 * Holds, before its body is read, a write that would only be refused after
 * it, until its tenant's share of validation time has refilled — as
 * upstream's API Priority and Fairness queues a request its flow has no
 * seat for rather than refusing it at once. A tenant whose writes to a
 * resource were answered 429 because its share was used up (expensive CEL
 * rules or schema patterns) has its next writes to that resource held in
 * its own queue (headers only, body unread, no seat taken): one at a time,
 * whenever the share has time left again, the oldest goes on to the seat
 * queue and runs. So a hostile client that keeps sending is slowed to what
 * its share pays for instead of costing the server a refusal per request.
 * A full queue (the tenant's queue length) gets the share's 429 at once and
 * a write held longer than the wait limit gets it then, both with
 * `Retry-After` (seconds until the share has refilled); a client that
 * leaves gives its place up. Reads, other resources and other tenants are
 * never held; the first write after the share has refilled and the queue
 * has drained goes through as ever.
 */
export class ThrottledWrites {
  /** `tenant` + group/resource pairs whose writes were last refused for validation time (the 10,000 most recent). */
  private readonly refused = new LRUCache<string, true>({ max: 10_000 });
  /** Tenants with writes held or let through from the hold (removed once both are none). */
  private readonly holds = new Map<string, TenantHold>();

  constructor(
    private readonly share: ValidationShare,
    private readonly limits: HoldLimits = { queueLength: 128, waitMs: 10_000 },
    private readonly onHeld: (tenant: string, held: number) => void = () => undefined,
  ) {}

  /**
   * Whether `tenant`'s write must be held: its writes to the resource were
   * refused for validation time, and the share is still used up or earlier
   * writes are still held (they go first). Clears the mark when not.
   */
  mustHold(tenant: string, method: string, group: string, resource: string): boolean {
    if (!WRITES.has(method) || !this.refused.has(key(tenant, group, resource))) return false;
    if (this.holds.has(tenant) || this.share.msUntilAvailable(tenant) > 0) return true;
    this.refused.delete(key(tenant, group, resource));
    return false;
  }

  /**
   * Holds a write of `tenant` (one {@link mustHold} said must be held):
   * answers its refusal at once when the tenant's hold is full; else
   * resolves, once the hold is over, with the function to call when the
   * write has finished (it was let through), or with its refusal.
   * `watchLeave` is given the function to call if the client leaves while
   * held (the hold then ends with a `timeout` refusal).
   */
  hold(tenant: string, watchLeave?: (leave: () => void) => void): HoldRefusal | Promise<HoldDone | HoldRefusal> {
    const hold = this.holds.get(tenant) ?? this.open(tenant);
    if (hold.queue.length >= this.limits.queueLength) {
      this.closeIfIdle(tenant, hold);
      return { reason: 'queue-full', error: this.refusal(tenant) };
    }
    return new Promise((resolve) => {
      const held: Held = {
        settle: (outcome) => {
          clearTimeout(timer);
          resolve(outcome);
        },
      };
      const leave = () => {
        const at = hold.queue.indexOf(held);
        if (at < 0) return;
        hold.queue.splice(at, 1);
        this.onHeld(tenant, hold.queue.length);
        held.settle({ reason: 'timeout', error: this.refusal(tenant) });
        this.pump(tenant, hold);
      };
      const timer = setTimeout(leave, this.limits.waitMs);
      watchLeave?.(leave);
      hold.queue.push(held);
      this.onHeld(tenant, hold.queue.length);
      this.pump(tenant, hold);
    });
  }

  /** Records a finished write's status: a 429 while the tenant's share is used up marks the resource. */
  answered(tenant: string, method: string, group: string, resource: string, status: number): void {
    if (!WRITES.has(method) || status !== 429) return;
    if (this.share.msUntilAvailable(tenant) > 0) this.refused.set(key(tenant, group, resource), true);
  }

  /** Writes of `tenant` held now (for tests and metrics). */
  heldOf(tenant: string): number {
    return this.holds.get(tenant)?.queue.length ?? 0;
  }

  private open(tenant: string): TenantHold {
    const hold: TenantHold = { queue: [], running: 0 };
    this.holds.set(tenant, hold);
    return hold;
  }

  private closeIfIdle(tenant: string, hold: TenantHold): void {
    if (hold.queue.length > 0 || hold.running > 0) return;
    clearTimeout(hold.wake);
    this.holds.delete(tenant);
  }

  /** The share's 429 (its Retry-After: seconds until the share has refilled, at least 1). */
  private refusal(tenant: string): ApiError {
    const ms = this.share.msUntilAvailable(tenant);
    // When the share refilled meanwhile, the write was refused for the hold's bounds alone.
    return ms > 0 ? validationShareUsedUp(ms / 1000) : tooManyRequests(1);
  }

  /**
   * Lets the oldest held write of `tenant` go when none let through is
   * still running and the share has time left; else, when the share is
   * what is missing, wakes up once it has refilled.
   */
  private pump(tenant: string, hold: TenantHold): void {
    if (hold.running > 0) return;
    if (hold.queue.length === 0) {
      this.closeIfIdle(tenant, hold);
      return;
    }
    const ms = this.share.msUntilAvailable(tenant);
    if (ms > 0) {
      clearTimeout(hold.wake);
      hold.wake = setTimeout(() => {
        hold.wake = undefined;
        this.pump(tenant, hold);
      }, Math.min(ms, MAX_WAKE_MS));
      return;
    }
    const next = hold.queue.shift()!;
    this.onHeld(tenant, hold.queue.length);
    hold.running++;
    let finished = false;
    next.settle(() => {
      if (finished) return;
      finished = true;
      hold.running--;
      this.pump(tenant, hold);
    });
  }
}

function key(tenant: string, group: string, resource: string): string {
  return `${tenant}\u0000${group}\u0000${resource}`;
}
