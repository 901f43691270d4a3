import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it, mock } from 'node:test';
import { rfc3339Now } from './timestamp.js';

describe('rfc3339Now', () => {
  beforeEach(() => mock.timers.enable({ apis: ['Date'], now: Date.UTC(2026, 10, 28, 1, 2, 3, 400) }));
  afterEach(() => mock.timers.reset());

  it('gives metav1.Time: UTC, whole seconds, no fraction', () => {
    assert.equal(rfc3339Now(), '2026-11-28T01:02:03Z');
  });

  it('follows the clock from one second to the next (the per-second text is not kept past its second)', () => {
    assert.equal(rfc3339Now(), '2026-11-28T01:02:03Z');
    mock.timers.tick(599);
    assert.equal(rfc3339Now(), '2026-11-28T01:02:03Z');
    mock.timers.tick(1);
    assert.equal(rfc3339Now(), '2026-11-28T01:02:04Z');
    mock.timers.tick(3_600_000);
    assert.equal(rfc3339Now(), '2026-11-28T02:02:04Z');
  });
});
