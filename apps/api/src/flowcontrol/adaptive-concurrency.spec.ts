import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AdaptiveLimit } from './adaptive-concurrency.js';
import { FairQueuing, SHARE_MEMORY_MS, type FlowObserver, type ReleaseSeats } from './fair-queuing.js';

const quiet: FlowObserver = { admitted: () => undefined, rejected: () => undefined, changed: () => undefined };

describe('AdaptiveLimit (replica-wide seats from the event loop delay)', () => {
  const options = { min: 4, max: 64, targetDelayMs: 10, targetUtilization: 0.9 };

  it('starts at the most seats and stays there while the loop keeps up', () => {
    const c = new AdaptiveLimit(options);
    assert.equal(c.limit, 64);
    for (let i = 0; i < 20; i++) assert.equal(c.update({ delayMs: 2, utilization: 1, limited: true }), 64);
  });

  it('shrinks while the delay grows past the target, at most halving in one window, never below the minimum', () => {
    const c = new AdaptiveLimit(options);
    assert.equal(c.update({ delayMs: 1000, utilization: 1, limited: true }), 32, 'halved, not cut to 64 * 10/1000');
    assert.equal(c.update({ delayMs: 20, utilization: 1, limited: true }), 16, 'target ÷ delay = 0.5');
    assert.equal(c.update({ delayMs: 12.5, utilization: 1, limited: false }), 12, 'target ÷ delay = 0.8');
    assert.equal(c.update({ delayMs: 10.5, utilization: 1, limited: false }), 11, 'at least one seat less while above the target');
    const limits: number[] = [];
    for (let i = 0; i < 20; i++) limits.push(c.update({ delayMs: 15 + i, utilization: 1, limited: true }));
    assert.ok(limits.every((l, i) => l <= (i === 0 ? 11 : limits[i - 1])), `never grows while above the target: ${limits.join(',')}`);
    assert.equal(c.limit, 4);
    assert.equal(c.update({ delayMs: 500, utilization: 1, limited: true }), 4);
  });

  it('grows back one seat per window once the delay is within the target, only while the limit holds requests back, up to the maximum', () => {
    const c = new AdaptiveLimit(options);
    for (let i = 0; i < 10; i++) c.update({ delayMs: 100, utilization: 1, limited: true });
    assert.equal(c.limit, 4);
    assert.equal(c.update({ delayMs: 5, utilization: 1, limited: false }), 4, 'nothing waits for a seat: no reason to grow');
    assert.equal(c.update({ delayMs: 5, utilization: 1, limited: true }), 5);
    assert.equal(c.update({ delayMs: 10, utilization: 1, limited: true }), 6, 'at the target counts as within it');
    for (let i = 0; i < 100; i++) c.update({ delayMs: 1, utilization: 1, limited: true });
    assert.equal(c.limit, 64);
  });

  it('does not shrink for a delay the requests did not cause (loop not saturated: other processes, requests waiting on PostgreSQL), and grows fast while the loop is mostly idle', () => {
    const c = new AdaptiveLimit(options);
    c.update({ delayMs: 100, utilization: 1, limited: true });
    assert.equal(c.limit, 32);
    assert.equal(c.update({ delayMs: 100, utilization: 0.5, limited: true }), 33);
    assert.equal(c.update({ delayMs: 1, utilization: 0.44, limited: true }), 42, 'mostly idle with requests held back: a quarter more');
    assert.equal(c.update({ delayMs: 100, utilization: 1, limited: true }), 21);
    assert.equal(c.update({ delayMs: 100, utilization: 0.89, limited: false }), 21);
    assert.equal(c.update({ delayMs: 100, utilization: 0.9, limited: false }), 10, 'busy for the target share and delayed: shrinks');
  });

  it('grows for requests held back only by their tenants\' shares while the loop has idle time, not while it is saturated', () => {
    const c = new AdaptiveLimit(options);
    for (let i = 0; i < 10; i++) c.update({ delayMs: 100, utilization: 1, limited: true });
    assert.equal(c.limit, 4);
    assert.equal(c.update({ delayMs: 5, utilization: 0.95, limited: false, shareLimited: true }), 4, 'saturated loop: a wider share would only feed the flooder');
    assert.equal(c.update({ delayMs: 5, utilization: 0.8, limited: false, shareLimited: true }), 5, 'the loop has room: one seat more');
    assert.equal(c.update({ delayMs: 5, utilization: 0.95, limited: true, shareLimited: true }), 6, 'the limit itself held a request back: grows as ever');
  });

  it('while several tenants are busy, aims at the contended target and may go down to the contended floor; back to the usual floor when contention ends', () => {
    const c = new AdaptiveLimit({ ...options, min: 8, contendedTargetDelayMs: 7.5, contendedMin: 4 });
    for (let i = 0; i < 10; i++) c.update({ delayMs: 100, utilization: 1, limited: true });
    assert.equal(c.limit, 8, 'a lone tenant: the usual floor');
    assert.equal(c.update({ delayMs: 9, utilization: 1, limited: true }), 9, 'a lone tenant: 9 ms is within the usual target, so it grows');
    assert.equal(c.update({ delayMs: 9, utilization: 1, limited: true, contended: true }), 7, 'tenants compete: 9 ms is over the contended target, so it shrinks (9 × 7.5 ÷ 9), below the usual floor');
    for (let i = 0; i < 10; i++) c.update({ delayMs: 100, utilization: 1, limited: true, contended: true });
    assert.equal(c.limit, 4, 'the contended floor');
    assert.equal(c.update({ delayMs: 100, utilization: 1, limited: true }), 8, 'contention over: the usual floor at once');
  });

  it('ignores samples that are not a delay, and refuses bounds that contradict each other', () => {
    const c = new AdaptiveLimit(options);
    c.update({ delayMs: 40, utilization: 1, limited: true });
    assert.equal(c.update({ delayMs: Number.NaN, utilization: 1, limited: true }), 32);
    assert.equal(c.update({ delayMs: -1, utilization: 1, limited: true }), 32);
    assert.equal(c.update({ delayMs: 40, utilization: Number.NaN, limited: true }), 32);
    assert.equal(c.update({ delayMs: Number.POSITIVE_INFINITY, utilization: 1, limited: true }), 32);
    assert.throws(() => new AdaptiveLimit({ ...options, min: 0, max: 8 }));
    assert.throws(() => new AdaptiveLimit({ ...options, min: 9, max: 8 }));
  });
});

describe('FairQueuing under an adaptive replica-wide limit', () => {
  const roomy = () => ({ concurrency: 64, queueLength: 1000 });

  it('reports whether the limit held requests back, and dispatches waiting requests as soon as the limit grows', async () => {
    const fq = new FairQueuing(roomy, 60_000, quiet, 8);
    const running: ReleaseSeats[] = [];
    for (let i = 0; i < 4; i++) running.push(await fq.admit('a', 'u'));
    assert.equal(fq.takeLimited(), false, 'four of eight seats taken: nothing held back');
    fq.setSeatLimit(2);
    assert.equal(fq.currentSeatLimit, 2);
    let admitted = 0;
    const waiting = Array.from({ length: 3 }, () => fq.admit('a', 'u').then((r) => (admitted++, r)));
    await new Promise((r) => setImmediate(r));
    assert.deepEqual([admitted, fq.stats('a')], [0, { inflight: 4, queued: 3 }], 'the executing requests keep their seats; new ones wait');
    assert.equal(fq.takeLimited(), true, 'requests wait for the replica-wide limit');
    fq.setSeatLimit(7);
    await new Promise((r) => setImmediate(r));
    assert.deepEqual([admitted, fq.stats('a')], [3, { inflight: 7, queued: 0 }]);
    assert.equal(fq.takeLimited(), false, 'the mark was reset, and nothing waits now');
    fq.setSeatLimit(1000);
    assert.equal(fq.currentSeatLimit, 8, 'never above the configured total');
    for (const r of [...running, ...(await Promise.all(waiting))]) r();
  });

  it('with the limit at its minimum, a light tenant\'s queued request is dispatched before the flooder\'s backlog', async () => {
    const fq = new FairQueuing(roomy, 60_000, quiet, 64);
    fq.setSeatLimit(2);
    const log: string[] = [];
    const running: ReleaseSeats[] = [];
    const submit = (tenant: string) => void fq.admit(tenant, tenant).then((r) => (log.push(tenant), running.push(r)));
    for (let i = 0; i < 40; i++) submit('flood');
    await new Promise((r) => setImmediate(r));
    for (let i = 0; i < 3; i++) submit('light');
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(fq.stats('light'), { inflight: 0, queued: 3 }, 'the light tenant waits in its fair queue, not in the loop');
    for (let i = 0; i < 6; i++) {
      running.shift()!();
      await new Promise((r) => setImmediate(r));
    }
    assert.deepEqual(log.slice(2, 8).filter((t) => t === 'light').length, 3, `after the flood's first two: ${log.slice(2, 8).join(',')}`);
    assert.ok(log.slice(2, 5).filter((t) => t === 'light').length >= 2, 'the light tenant goes first');
    while (running.length > 0) {
      running.shift()!();
      await new Promise((r) => setImmediate(r));
    }
    assert.equal(log.length, 43);
  });

  it('lets a request that waits with more seats than a limit that shrank since run once nothing else executes', async () => {
    const fq = new FairQueuing(roomy, 60_000, quiet, 64);
    const running: ReleaseSeats[] = [];
    for (let i = 0; i < 6; i++) running.push(await fq.admit('t', 'u', 10));
    let ran = false;
    const wide = fq.admit('t', 'u', 10).then((r) => ((ran = true), r));
    fq.setSeatLimit(4);
    for (const r of running) r();
    await new Promise((r) => setImmediate(r));
    assert.equal(ran, true);
    assert.equal(fq.seatsOf('t'), 10);
    (await wide)();
  });

  it('while the limit is lowered, a flooding tenant holds at most an equal share of it, so a light tenant\'s next request starts at once', async () => {
    let clock = 0;
    const fq = new FairQueuing(roomy, 60_000, quiet, 16, () => clock);
    fq.setSeatLimit(4);
    const light = await fq.admit('light', 'l');
    const flood: ReleaseSeats[] = [];
    for (let i = 0; i < 10; i++) void fq.admit('flood', 'f').then((r) => flood.push(r));
    await new Promise((r) => setImmediate(r));
    assert.deepEqual([fq.seatsOf('flood'), fq.stats('flood').queued], [2, 8], 'two busy tenants: ceil(4 / 2) = 2 seats each');
    assert.deepEqual([fq.takeShareLimited(), fq.takeLimited()], [true, false], 'the share held requests back, not the limit (2 of 4 seats free)');
    assert.equal(fq.takeContended(), true, 'two tenants are busy');
    let started = false;
    const next = fq.admit('light', 'l').then((r) => ((started = true), r));
    await new Promise((r) => setImmediate(r));
    assert.equal(started, true, 'the light tenant\'s second request took the seat the flooder had to leave');
    light();
    (await next)();
    flood.shift()!();
    await new Promise((r) => setImmediate(r));
    assert.equal(fq.seatsOf('flood'), 2, `the light tenant still counts as busy for ${SHARE_MEMORY_MS} ms after its last answer`);
    clock += SHARE_MEMORY_MS + 1;
    flood.shift()!();
    await new Promise((r) => setImmediate(r));
    assert.equal(fq.seatsOf('flood'), 4, 'alone for longer, the flooder may use the whole lowered limit');
    fq.takeContended();
    assert.equal(fq.takeContended(), false, 'one tenant busy: no contention');
    while (flood.length > 0) {
      flood.shift()!();
      await new Promise((r) => setImmediate(r));
    }
    assert.deepEqual(fq.stats('flood'), { inflight: 0, queued: 0 });
  });

  it('keeps sharing work-conserving while the limit is at its total, and lets a tenant with no seat start one request wider than its share', async () => {
    const fq = new FairQueuing(roomy, 60_000, quiet, 8);
    const light = await fq.admit('light', 'l');
    const running: ReleaseSeats[] = [];
    for (let i = 0; i < 7; i++) running.push(await fq.admit('flood', 'f'));
    assert.equal(fq.seatsOf('flood'), 7, 'the limit is not lowered: the flooder may take every free seat');
    for (const r of [light, ...running]) r();
    const many = new FairQueuing(roomy, 60_000, quiet, 64);
    many.setSeatLimit(12);
    const others = await Promise.all(['t1', 't2', 't3', 't4', 't5'].map((t) => many.admit(t, 'u')));
    const wide = await many.admit('wide', 'w', 3);
    assert.equal(many.seatsOf('wide'), 3, 'a share of ceil(12 / 6) = 2 seats does not stop a first request of 3');
    for (const r of [wide, ...others]) r();
  });
});
