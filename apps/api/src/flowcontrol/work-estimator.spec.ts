import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MAX_SEATS, SEAT_BYTES, WorkEstimator } from './work-estimator.js';

describe('WorkEstimator', () => {
  it('gives a small request one seat and a large body one more seat per 16 KiB, at most 10', () => {
    const w = new WorkEstimator();
    assert.equal(w.estimate('t', 'GET', 0), 1);
    assert.equal(w.estimate('t', 'POST', 900), 1);
    assert.equal(w.estimate('t', 'POST', 40_000), 3);
    assert.equal(w.estimate('t', 'POST', 3 * 2 ** 20), MAX_SEATS);
    assert.equal(w.estimate('t', 'POST', Number.NaN), 1);
  });

  it('estimates a tenant\'s writes wider once they have come back as large answers, and only that tenant\'s and that kind\'s', () => {
    const w = new WorkEstimator();
    for (let i = 0; i < 20; i++) assert.equal(w.observe('noisy', 'POST', 40_000, 80_000), 1 + Math.floor(120_000 / SEAT_BYTES));
    assert.ok(w.estimate('noisy', 'POST', 40_000) >= 7, `estimate ${w.estimate('noisy', 'POST', 40_000)}`);
    assert.equal(w.estimate('noisy', 'GET', 0), 1, 'reads are estimated by earlier reads');
    assert.equal(w.estimate('quiet', 'POST', 900), 1, 'other tenants are unaffected');
    // Cheap answers bring the estimate back down.
    for (let i = 0; i < 30; i++) w.observe('noisy', 'POST', 900, 500);
    assert.equal(w.estimate('noisy', 'POST', 900), 1);
  });

  it('returns the actual work unclamped, so a huge answer is charged in full', () => {
    assert.equal(new WorkEstimator().observe('t', 'GET', 0, 100 * 2 ** 20), 1 + 6400);
  });
});
