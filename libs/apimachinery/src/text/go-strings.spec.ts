import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compareStrings, goQuote, isGoPrintable } from './go-strings.js';

describe('Go string helpers', () => {
  it('goQuote escapes as strconv.Quote: short escapes, \\x for ASCII controls, \\u and \\U for other non-printables', () => {
    assert.equal(goQuote('a"b\\c'), '"a\\"b\\\\c"');
    assert.equal(goQuote('\u0007\b\t\n\v\f\r'), '"\\a\\b\\t\\n\\v\\f\\r"');
    assert.equal(goQuote('\u0001\u007f'), '"\\x01\\x7f"');
    assert.equal(goQuote('\u00ad\u200b'), '"\\u00ad\\u200b"');
    assert.equal(goQuote('\u{e0001}'), '"\\U000e0001"');
    assert.equal(goQuote('é 日本 🙂'), '"é 日本 🙂"');
  });

  it('goQuote turns a lone surrogate into U+FFFD, as Go sees such input after JSON decoding', () => {
    assert.equal(goQuote('a\ud800b'), '"a\ufffdb"');
  });

  it('isGoPrintable accepts letters, marks, numbers, punctuation, symbols and the ASCII space only', () => {
    assert.ok(isGoPrintable(0x20) && isGoPrintable(0x41) && isGoPrintable(0x1f642));
    assert.ok(!isGoPrintable(0xa0) && !isGoPrintable(0x09) && !isGoPrintable(0x200b));
  });

  it('compareStrings orders by code unit, not by locale', () => {
    assert.deepEqual(['b', 'B', 'a', 'Z', 'é'].sort(compareStrings), ['B', 'Z', 'a', 'b', 'é']);
  });
});
