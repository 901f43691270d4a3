import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApiError } from '@plinth/apimachinery';
import { FairQueuing, type FlowObserver, handOf } from './fair-queuing.js';

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
    await fq.admit('a', 'u');
    const order: string[] = [];
    const aWaits = [fq.admit('a', 'u'), fq.admit('a', 'u')].map((p) => p.then(() => void order.push('a')));
    const bWaits = fq.admit('b', 'v').then(() => void order.push('b'));
    assert.deepEqual([fq.stats('a'), fq.stats('b')], [{ inflight: 2, queued: 2 }, { inflight: 0, queued: 1 }]);
    a1();
    await bWaits;
    assert.deepEqual(order, ['b'], 'b got the freed seat although a queued first');
    assert.deepEqual([fq.stats('a'), fq.stats('b')], [{ inflight: 1, queued: 2 }, { inflight: 1, queued: 0 }]);
    void aWaits;
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
