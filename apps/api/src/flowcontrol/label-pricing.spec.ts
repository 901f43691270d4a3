import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FairQueuing, type FlowObserver } from './fair-queuing.js';
import { SEAT_INDEX_ENTRIES, indexEntriesOf, seatsForIndexEntries } from './storage-work.js';
import { MAX_SEATS, WorkEstimator } from './work-estimator.js';

/** A label-heavy write as it reaches flow control: a 5,000-label ConfigMap (~75 KB of body, the same back). */
const HEAVY = { bytes: 75_000, labels: 5_000 };
/** A plain write: a small ConfigMap with two labels. */
const PLAIN = { bytes: 300, labels: 2 };

describe('pricing writes by the label index entries they make PostgreSQL write', () => {
  it('charges a label-heavy write its index entries on top of its bytes, and a plain write nothing more', () => {
    const w = new WorkEstimator();
    const plain = w.observe('p', 'POST', PLAIN.bytes, PLAIN.bytes, PLAIN.labels);
    const heavy = w.observe('h', 'POST', HEAVY.bytes, HEAVY.bytes, HEAVY.labels);
    assert.equal(plain, 1);
    const byBytes = 1 + Math.floor((2 * HEAVY.bytes) / (16 * 1024));
    assert.equal(heavy, byBytes + Math.floor((3 * HEAVY.labels) / SEAT_INDEX_ENTRIES));
    assert.ok(heavy > 8 * byBytes, `a 5,000-label create costs PostgreSQL far more than its bytes: ${heavy} seats`);
    // An update rewrites every entry; a delete writes the change log's only; reads and labels of nothing cost none.
    assert.equal(w.observe('h', 'PUT', 0, 0, HEAVY.labels), 1 + seatsForIndexEntries(3 * HEAVY.labels));
    assert.equal(w.observe('h', 'DELETE', 0, 0, HEAVY.labels), 1 + seatsForIndexEntries(HEAVY.labels));
    assert.equal(w.observe('h', 'GET', 0, 0, HEAVY.labels), 1);
    assert.equal(indexEntriesOf('POST', 100_000), 300_000);
    assert.equal(new WorkEstimator().observe('t', 'POST', 2_000_000, 2_000_000, 100_000), 1 + 244 + 1562);
  });

  it('estimates a tenant\'s next writes wider once its writes stored many labels, and only that tenant\'s', () => {
    const w = new WorkEstimator();
    assert.equal(w.estimate('h', 'POST', 1_000), 1);
    for (let i = 0; i < 5; i++) w.observe('h', 'POST', 1_000, 1_000, 2_000);
    assert.equal(w.estimate('h', 'POST', 1_000), MAX_SEATS, 'seats from the labels its recent writes stored');
    assert.equal(w.estimate('h', 'GET', 0), 1, 'its reads stay narrow');
    assert.equal(w.estimate('p', 'POST', 1_000), 1, 'other tenants are unaffected');
    for (let i = 0; i < 30; i++) w.observe('h', 'POST', 1_000, 1_000, 0);
    assert.equal(w.estimate('h', 'POST', 1_000), 1, 'plain writes bring the estimate back down');
  });

  it('gives a tenant sending label-heavy writes proportionally fewer turns, so another tenant\'s plain writes are not starved', async () => {
    const charged = new Map<string, number>();
    const observer: FlowObserver = {
      admitted: () => undefined,
      rejected: () => undefined,
      changed: () => undefined,
      charged: (t, seats) => charged.set(t, (charged.get(t) ?? 0) + seats),
    };
    // 8 replica-wide seats (a request is at most 2 wide), each tenant 64 of its own: the replica's seats are what they share.
    const fq = new FairQueuing(() => ({ concurrency: 64, queueLength: 1000 }), 60_000, observer, 8);
    const w = new WorkEstimator();
    const order: string[] = [];
    const TOTAL = 600;
    // Closed-loop clients, as kubectl's: each sends its next write once the last is answered. A request's work is done
    // (and its seats given back) a turn of the event loop after it starts.
    const client = async (tenant: string, write: typeof HEAVY) => {
      while (order.length < TOTAL) {
        const release = await fq.admit(tenant, `${tenant}-user`, w.estimate(tenant, 'POST', write.bytes));
        order.push(tenant);
        await new Promise((r) => setImmediate(r));
        release(w.observe(tenant, 'POST', write.bytes, write.bytes, write.labels));
      }
    };
    await Promise.all([...Array.from({ length: 16 }, () => client('heavy', HEAVY)), ...Array.from({ length: 16 }, () => client('light', PLAIN))]);
    // Once TOTAL are reached the clients stop and whatever still waits is let through: count up to TOTAL.
    const served = order.slice(0, TOTAL);
    const turns = (t: string) => served.filter((x) => x === t).length;
    const heavyWork = charged.get('heavy')! / order.filter((x) => x === 'heavy').length;
    const lightWork = charged.get('light')! / order.filter((x) => x === 'light').length;
    assert.ok(heavyWork > 50 * lightWork, `a heavy write is charged ${heavyWork.toFixed(0)} seats, a plain one ${lightWork.toFixed(1)}`);
    // Both tenants keep every seat busy; shared by work, the light tenant's writes are served far more often.
    assert.ok(turns('light') > 20 * turns('heavy'), `light ${turns('light')} turns, heavy ${turns('heavy')}`);
    // And the heavy tenant is not shut out either: it keeps being served, in proportion to its work.
    assert.ok(turns('heavy') >= 3, `heavy ${turns('heavy')} turns`);
    // After the first round (every client's first request), the light tenant never waited behind more than one of
    // the heavy tenant's admissions in a row.
    const runs = served.slice(32).join(' ').split('light').map((run) => run.split('heavy').length - 1);
    assert.ok(Math.max(...runs) <= 1, `longest run of heavy admissions: ${Math.max(...runs)}`);
  });
});
