import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { TenantValidationBudget } from '../admission/validation-budget.js';
import { type HoldDone, type HoldRefusal, ThrottledWrites } from './throttled-writes.js';

/** A tenant `t` whose writes to g/r were refused for validation time and whose share is `debtMs` of work short. */
function throttled(opts: { msPerSecond: number; debtMs: number; queueLength?: number; waitMs?: number }): { tw: ThrottledWrites; budget: TenantValidationBudget } {
  const budget = new TenantValidationBudget({ msPerSecond: opts.msPerSecond, burstMs: 1 });
  const tw = new ThrottledWrites(budget, { queueLength: opts.queueLength ?? 10, waitMs: opts.waitMs ?? 60_000 });
  budget.charge('t', opts.debtMs + 1);
  tw.answered('t', 'POST', 'g', 'r', 429);
  return { tw, budget };
}

/** A held write's client, which may leave. */
function client(): { watch: (leave: () => void) => void; leave: () => void } {
  let leave: (() => void) | undefined;
  return { watch: (fn) => (leave = fn), leave: () => leave?.() };
}

/** Holds a write of `t`, as a promise whether it was refused at once or not. */
function hold(tw: ThrottledWrites, c?: ReturnType<typeof client>): Promise<HoldDone | HoldRefusal> {
  return Promise.resolve(tw.hold('t', c?.watch));
}

function refusal(outcome: HoldDone | HoldRefusal): HoldRefusal {
  assert.equal(typeof outcome, 'object', 'the write was let through');
  return outcome as HoldRefusal;
}

describe('ThrottledWrites', () => {
  it('holds writes while the share is used up and lets them go in order, one at a time, once it has refilled (none lost)', async () => {
    // Debts of a quarter second and more: a loaded machine must not refill the share between two statements of the test.
    const { tw, budget } = throttled({ msPerSecond: 1000, debtMs: 250 });
    assert.ok(tw.mustHold('t', 'POST', 'g', 'r'));
    const order: string[] = [];
    const a = hold(tw).then((o) => (order.push('a'), o));
    const b = hold(tw).then((o) => (order.push('b'), o));
    assert.equal(tw.heldOf('t'), 2);
    const doneA = await a;
    assert.equal(typeof doneA, 'function');
    assert.equal(budget.msUntilAvailable('t'), 0, 'let through only once the share has time left');
    // While the write let through runs (its validation charges the share), the next stays held.
    budget.charge('t', 200);
    assert.equal(tw.heldOf('t'), 1);
    assert.deepEqual(order, ['a']);
    (doneA as HoldDone)();
    const doneB = await b;
    assert.equal(typeof doneB, 'function');
    assert.deepEqual(order, ['a', 'b']);
    (doneB as HoldDone)();
    // Refilled and drained: the next write is not held, and the mark is gone.
    assert.equal(tw.mustHold('t', 'POST', 'g', 'r'), false);
    tw.answered('t', 'POST', 'g', 'r', 201);
    assert.equal(tw.mustHold('t', 'POST', 'g', 'r'), false);
  });

  it('answers a write held longer than the wait limit 429 with Retry-After until the share refills', async () => {
    const { tw } = throttled({ msPerSecond: 1, debtMs: 5000, waitMs: 20 });
    const out = refusal(await hold(tw));
    assert.equal(out.reason, 'timeout');
    assert.equal(out.error.code, 429);
    assert.equal(out.error.status.reason, 'TooManyRequests');
    assert.match(out.error.status.message ?? '', /used its share of validation time/);
    assert.ok(Number(out.error.headers['Retry-After']) >= 4, out.error.headers['Retry-After']);
    assert.equal(tw.heldOf('t'), 0);
  });

  it('answers 429 at once when the tenant\'s hold queue is full; a client that leaves gives its place up', async () => {
    const { tw } = throttled({ msPerSecond: 1, debtMs: 60_000, queueLength: 2 });
    const first = client();
    const second = client();
    const held = [hold(tw, first), hold(tw, second)];
    const full = refusal(tw.hold('t') as HoldRefusal);
    assert.equal(full.reason, 'queue-full');
    assert.equal(full.error.code, 429);
    assert.ok(Number(full.error.headers['Retry-After']) >= 1);
    assert.equal(tw.heldOf('t'), 2);
    // The first client leaves: its place is free, so a new write is held (not refused).
    first.leave();
    assert.equal(refusal(await held[0]).reason, 'timeout');
    assert.equal(tw.heldOf('t'), 1);
    const third = client();
    const again = hold(tw, third);
    assert.equal(tw.heldOf('t'), 2);
    second.leave();
    third.leave();
    await Promise.all([held[1], again]);
    assert.equal(tw.heldOf('t'), 0);
  });

  it('never holds reads, writes of other resources, or other tenants', async () => {
    const { tw, budget } = throttled({ msPerSecond: 1, debtMs: 60_000 });
    const c = client();
    const held = hold(tw, c);
    assert.equal(tw.mustHold('t', 'GET', 'g', 'r'), false);
    assert.equal(tw.mustHold('t', 'DELETE', 'g', 'r'), false);
    assert.equal(tw.mustHold('t', 'POST', 'g', 'other'), false);
    assert.equal(tw.mustHold('u', 'POST', 'g', 'r'), false);
    // Another tenant whose own share is used up is held in its own queue, not behind t's.
    budget.charge('u', 5);
    tw.answered('u', 'PUT', 'g', 'r', 429);
    assert.ok(tw.mustHold('u', 'PUT', 'g', 'r'));
    assert.equal(tw.heldOf('u'), 0);
    assert.equal(tw.heldOf('t'), 1);
    c.leave();
    await held;
  });
});
