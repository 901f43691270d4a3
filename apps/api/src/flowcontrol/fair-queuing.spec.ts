import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApiError } from '@plinth/apimachinery';
import { FairQueuing, type FlowObserver, handOf, type ReleaseSeats } from './fair-queuing.js';

const quiet: FlowObserver = { admitted: () => undefined, rejected: () => undefined, changed: () => undefined };

describe('FairQueuing', () => {
  it('seats up to the concurrency, queues up to the queue length, refuses the rest with 429 and Retry-After', async () => {
    const fq = new FairQueuing(() => ({ concurrency: 2, queueLength: 1 }), 60_000, quiet);
    const a = await fq.admit('t', 'u');
    await fq.admit('t', 'u');
    const waiting = fq.admit('t', 'u');
    assert.deepEqual(fq.stats('t'), { inflight: 2, queued: 1 });
    await assert.rejects(fq.admit('t', 'u'), (err: ApiError) => err.code === 429 && err.headers['Retry-After'] === '1' && err.status.reason === 'TooManyRequests');
    // Another tenant has its own seats.
    await fq.admit('other', 'u');
    a();
    a();
    await waiting;
    assert.deepEqual(fq.stats('t'), { inflight: 2, queued: 0 });
  });

  it('refuses a request that waited longest, and a tenant over its rate', async () => {
    const fq = new FairQueuing(() => ({ concurrency: 1, queueLength: 5 }), 20, quiet);
    await fq.admit('t', 'u');
    await assert.rejects(fq.admit('t', 'u'), (err: ApiError) => err.code === 429);
    assert.deepEqual(fq.stats('t'), { inflight: 1, queued: 0 });
    const rated = new FairQueuing(() => ({ concurrency: 10, queueLength: 5, requestsPerSecond: 2 }), 1000, quiet);
    (await rated.admit('r', 'u'))();
    (await rated.admit('r', 'u'))();
    await assert.rejects(rated.admit('r', 'u'), (err: ApiError) => err.code === 429 && Number(err.headers['Retry-After']) >= 1);
  });

  it('gives a freed replica-wide seat to the waiting tenant with the fewest requests executing', async () => {
    const fq = new FairQueuing(() => ({ concurrency: 10, queueLength: 10 }), 60_000, quiet, 2);
    const a1 = await fq.admit('a', 'u');
    const a2 = await fq.admit('a', 'u');
    const order: string[] = [];
    const aWaits = [fq.admit('a', 'u'), fq.admit('a', 'u')].map((p) => p.then((release) => {
      order.push('a');
      return release;
    }));
    const bWaits = fq.admit('b', 'v').then((release) => {
      order.push('b');
      return release;
    });
    assert.deepEqual([fq.stats('a'), fq.stats('b')], [{ inflight: 2, queued: 2 }, { inflight: 0, queued: 1 }]);
    a1();
    await bWaits;
    assert.deepEqual(order, ['b'], 'b got the freed seat although a queued first');
    assert.deepEqual([fq.stats('a'), fq.stats('b')], [{ inflight: 1, queued: 2 }, { inflight: 1, queued: 0 }]);
    // Let the rest run, so no waiter outlives the test.
    a2();
    (await bWaits)();
    for (const release of await Promise.all(aWaits)) release();
  });

  it('serves a user\'s single request before most of a flooding user\'s backlog (shuffle sharding, round-robin)', async () => {
    // Pick a light user whose queues differ from the flooder's, as shuffle sharding makes likely.
    const flooder = 'flooder';
    const light = ['a', 'b', 'c', 'd', 'e', 'f', 'g'].find((u) => handOf(u).every((q) => !handOf(flooder).includes(q)))!;
    const fq = new FairQueuing(() => ({ concurrency: 1, queueLength: 100 }), 60_000, quiet);
    let release = await fq.admit('t', flooder);
    const order: string[] = [];
    const pending: Promise<void>[] = [];
    const enqueue = (user: string) =>
      pending.push(
        fq.admit('t', user).then((r) => {
          order.push(user);
          release = r;
        }),
      );
    for (let i = 0; i < 20; i++) enqueue(flooder);
    enqueue(light);
    for (let i = 0; i < 21; i++) {
      release();
      await new Promise((r) => setImmediate(r));
    }
    await Promise.all(pending);
    assert.ok(order.indexOf(light) <= 2, `served at position ${order.indexOf(light)}: ${order.join(',')}`);
    assert.equal(order.length, 21);
  });
});

/** Drives a FairQueuing by hand: requests wait, the oldest running one finishes on `finishOldest`, and every dispatch is logged. */
function driver(fq: FairQueuing) {
  const running: { tenant: string; release: ReleaseSeats; actual?: number }[] = [];
  const log: string[] = [];
  const submit = (tenant: string, width: number, actual?: number) =>
    void fq.admit(tenant, tenant, width).then((release) => {
      log.push(tenant);
      running.push({ tenant, release, actual });
    });
  const settle = () => new Promise((r) => setImmediate(r));
  const finishOldest = async () => {
    const r = running.shift()!;
    r.release(r.actual);
    await settle();
  };
  /** Finishes everything, so no waiter outlives the test. */
  const drain = async () => {
    while (running.length > 0) await finishOldest();
  };
  return { submit, settle, finishOldest, drain, log, running };
}

describe('FairQueuing by work (seats per request, virtual time)', () => {
  const roomy = () => ({ concurrency: 64, queueLength: 1000 });

  it('serves a cheap tenant\'s waiting requests before an expensive tenant\'s backlog, and shares seats by work, not by request count', async () => {
    const fq = new FairQueuing(roomy, 60_000, quiet, 16);
    const d = driver(fq);
    for (let i = 0; i < 40; i++) d.submit('costly', 4, 4);
    await d.settle();
    assert.deepEqual(d.log, ['costly', 'costly', 'costly', 'costly'], 'four requests of 4 seats fill 16 seats');
    assert.equal(fq.seatsOf('costly'), 16);
    for (let i = 0; i < 80; i++) d.submit('cheap', 1, 1);
    await d.settle();
    // The first costly request to finish frees 4 seats: they all go to the cheap tenant, which is behind in virtual time.
    await d.finishOldest();
    assert.deepEqual(d.log.slice(4), ['cheap', 'cheap', 'cheap', 'cheap']);
    // With both backlogged, each is given about the same seats of work: the cheap tenant four requests per costly one.
    for (let i = 0; i < 60; i++) await d.finishOldest();
    const window = d.log.slice(8, 68);
    const work = (t: string) => window.filter((x) => x === t).length * (t === 'costly' ? 4 : 1);
    assert.ok(Math.abs(work('costly') - work('cheap')) <= 12, `work given: costly ${work('costly')}, cheap ${work('cheap')}`);
    assert.ok(window.filter((x) => x === 'cheap').length >= 3 * window.filter((x) => x === 'costly').length);
    await d.drain();
  });

  it('charges the work a request actually did: a tenant whose requests turn out expensive gets proportionally fewer seats', async () => {
    const fq = new FairQueuing(roomy, 60_000, quiet, 4);
    const d = driver(fq);
    // Both estimated at 1 seat; the heavy tenant's requests each turn out to have done 10 seats of work.
    for (let i = 0; i < 100; i++) {
      d.submit('heavy', 1, 10);
      d.submit('light', 1, 1);
    }
    await d.settle();
    for (let i = 0; i < 60; i++) await d.finishOldest();
    const served = (t: string) => d.log.filter((x) => x === t).length;
    assert.ok(served('light') >= 5 * served('heavy'), `light ${served('light')}, heavy ${served('heavy')}`);
    assert.ok(served('heavy') >= 3, 'the heavy tenant still progresses');
    await d.drain();
  });

  it('lets no tenant save up idle time: a tenant that arrives late alternates with a busy one instead of taking every seat', async () => {
    const fq = new FairQueuing(roomy, 60_000, quiet, 2);
    const d = driver(fq);
    for (let i = 0; i < 60; i++) d.submit('busy', 1);
    await d.settle();
    for (let i = 0; i < 40; i++) await d.finishOldest();
    for (let i = 0; i < 10; i++) d.submit('late', 1);
    await d.settle();
    for (let i = 0; i < 10; i++) await d.finishOldest();
    const after = d.log.slice(42);
    assert.ok(after.includes('late') && after.slice(0, 4).includes('busy'), `dispatches after the late tenant arrived: ${after.join(',')}`);
    await d.drain();
  });

  it('does not put a flooder that arrives while the replica is idle behind the virtual time the last busy tenant ran up: the returning light tenant goes first', async () => {
    const fq = new FairQueuing(roomy, 60_000, quiet, 2);
    const d = driver(fq);
    // The light tenant runs alone for a while (its virtual time advances by 100), then is idle for a moment.
    for (let i = 0; i < 100; i++) {
      d.submit('light', 1);
      await d.settle();
      await d.finishOldest();
    }
    // The flooder arrives while nothing runs: it fills both seats and queues a backlog.
    for (let i = 0; i < 30; i++) d.submit('flood', 1);
    await d.settle();
    // The light tenant comes back with one request: the next freed seat is its.
    d.submit('light', 1);
    await d.settle();
    await d.finishOldest();
    assert.deepEqual(d.log.slice(100), ['flood', 'flood', 'light'], `dispatches after the flood arrived: ${d.log.slice(100, 110).join(',')}`);
    await d.drain();
  });

  it('lets no request take more than a quarter of the seats, so a wide one never waits for the replica to drain', async () => {
    const fq = new FairQueuing(roomy, 60_000, quiet, 8);
    const d = driver(fq);
    d.submit('t', 10);
    d.submit('t', 10);
    d.submit('u', 1);
    await d.settle();
    assert.deepEqual([fq.seatsOf('t'), fq.seatsOf('u')], [4, 1]);
    await d.drain();
  });
});
