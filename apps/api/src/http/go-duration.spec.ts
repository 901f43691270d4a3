import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseGoDuration } from './go-duration.js';

describe('parseGoDuration', () => {
  it('reads what time.ParseDuration reads, in milliseconds', () => {
    assert.equal(parseGoDuration('32s'), 32000);
    assert.equal(parseGoDuration('1m0s'), 60000);
    assert.equal(parseGoDuration('1.5h'), 5400000);
    assert.equal(parseGoDuration('250ms'), 250);
    assert.equal(parseGoDuration('1h2m3s4ms'), 3723004);
    assert.equal(parseGoDuration('0'), 0);
    assert.equal(parseGoDuration('-2s'), -2000);
    assert.equal(parseGoDuration('.5s'), 500);
  });

  it('refuses what it refuses, with its messages', () => {
    assert.throws(() => parseGoDuration(''), { message: 'time: invalid duration ""' });
    assert.throws(() => parseGoDuration('abc'), { message: 'time: invalid duration "abc"' });
    assert.throws(() => parseGoDuration('10'), { message: 'time: missing unit in duration "10"' });
    assert.throws(() => parseGoDuration('1d'), { message: 'time: unknown unit "d" in duration "1d"' });
    assert.throws(() => parseGoDuration('.s'), { message: 'time: invalid duration ".s"' });
  });
});
