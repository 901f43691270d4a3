import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { watchDeadline } from './watch-deadline.js';

describe('watchDeadline', () => {
  it('ends a watch without timeoutSeconds between half and all of the maximum, by the random draw', () => {
    assert.equal(watchDeadline(1000, undefined, 2000, () => 0), 2000);
    assert.equal(watchDeadline(1000, undefined, 2000, () => 0.5), 2500);
    assert.ok(watchDeadline(1000, undefined, 2000, () => 0.999999) < 3000);
    assert.equal(watchDeadline(1000, 0, 2000, () => 0), 2000, 'timeoutSeconds=0 is no timeout');
  });

  it('ends a watch with timeoutSeconds after it, capped at the maximum, whatever the draw', () => {
    assert.equal(watchDeadline(1000, 1, 2000, () => 0.3), 2000);
    assert.equal(watchDeadline(1000, 5, 2000, () => 0.3), 3000);
  });
});
