import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseGoDuration, parseGoDurationNanos } from './go-duration.js';

describe('parseGoDuration', () => {
  it('reads what time.ParseDuration reads, in milliseconds', () => {
    assert.equal(parseGoDuration('32s'), 32000);
    assert.equal(parseGoDuration('1m0s'), 60000);
    assert.equal(parseGoDuration('1.5h'), 5400000);
    assert.equal(parseGoDuration('250ms'), 250);
    assert.equal(parseGoDuration('1h2m3s4ms'), 3723004);
    assert.equal(parseGoDuration('0'), 0);
    assert.equal(parseGoDuration('-0'), 0);
    assert.equal(parseGoDuration('+0'), 0);
    assert.equal(parseGoDuration('-2s'), -2000);
    assert.equal(parseGoDuration('+2s'), 2000);
    assert.equal(parseGoDuration('.5s'), 500);
    assert.equal(parseGoDuration('5.s'), 5000);
    assert.equal(parseGoDuration('1.5ms'), 1.5);
  });

  it('has Go\'s units, both micro signs included, and its int64 range in nanoseconds', () => {
    assert.equal(parseGoDurationNanos('1ns'), 1n);
    assert.equal(parseGoDurationNanos('1us'), 1000n);
    assert.equal(parseGoDurationNanos('1\u00b5s'), 1000n);
    assert.equal(parseGoDurationNanos('1\u03bcs'), 1000n);
    assert.equal(parseGoDurationNanos('1.0000000001s'), 1_000_000_000n, 'a fraction\'s nanoseconds are truncated');
    assert.equal(parseGoDurationNanos('0.3333333333333333333333333333333s'), 333_333_333n, 'digits past int64 precision are dropped, not refused');
    assert.equal(parseGoDurationNanos('9223372036854775807ns'), 9223372036854775807n);
    assert.equal(parseGoDurationNanos('-9223372036854775808ns'), -9223372036854775808n, 'the negative reaches one further');
    assert.equal(parseGoDurationNanos('2562047h'), 2562047n * 3_600_000_000_000n);
    assert.equal(parseGoDurationNanos('1h1h'), 7_200_000_000_000n, 'a unit may repeat');
  });

  it('refuses what it refuses, with its messages', () => {
    const refuses = (text: string, message: string) => assert.throws(() => parseGoDuration(text), { message }, text);
    refuses('', 'time: invalid duration ""');
    refuses('-', 'time: invalid duration "-"');
    refuses('abc', 'time: invalid duration "abc"');
    refuses(' 1s', 'time: invalid duration " 1s"');
    refuses('10', 'time: missing unit in duration "10"');
    refuses('-1', 'time: missing unit in duration "-1"');
    refuses('1d', 'time: unknown unit "d" in duration "1d"');
    refuses('1s ', 'time: unknown unit "s " in duration "1s "');
    refuses('3 s', 'time: unknown unit " s" in duration "3 s"');
    refuses('1e3s', 'time: unknown unit "e" in duration "1e3s"');
    refuses('.s', 'time: invalid duration ".s"');
    refuses('1h-2m', 'time: unknown unit "h-" in duration "1h-2m"');
    refuses('--1s', 'time: invalid duration "--1s"');
    refuses('1..5s', 'time: missing unit in duration "1..5s"');
    refuses('9223372036854775808ns', 'time: invalid duration "9223372036854775808ns"');
    refuses('2562048h', 'time: invalid duration "2562048h"');
    refuses('99999999999999999999s', 'time: invalid duration "99999999999999999999s"');
    refuses('5000000h5000000h', 'time: invalid duration "5000000h5000000h"');
    refuses('1\u00e9s', 'time: unknown unit "\\xc3\\xa9s" in duration "1\\xc3\\xa9s"');
    refuses('"1"s', 'time: invalid duration "\\"1\\"s"');
  });
});
