import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DecodeError } from './decode-error.js';
import { MAX_STORABLE_DEPTH, makeStorable } from './storable-json.js';

describe('makeStorable', () => {
  it('replaces lone surrogates in values and keys with U+FFFD, as Go does, and keeps pairs', () => {
    const v = makeStorable({ a: 'x\ud800y', l: ['\udfff'], '\ud800k': 1, ok: '😀' }) as Record<string, unknown>;
    assert.deepEqual(v, { a: 'x\ufffdy', l: ['\ufffd'], ok: '😀', '\ufffdk': 1 });
  });

  it('refuses a NUL, naming where it is', () => {
    assert.throws(() => makeStorable({ data: { a: 'x\u0000' } }), (e: DecodeError) => e instanceof DecodeError && /^data\.a contains a NUL character/.test(e.message));
    assert.throws(() => makeStorable({ l: [{ 'k\u0000': 1 }] }), /the key "k\\u0000" in l\[0\] contains a NUL character/);
  });

  it('refuses nesting deeper than the limit, without recursion', () => {
    let deep: unknown = 1;
    for (let i = 0; i < MAX_STORABLE_DEPTH + 1; i++) deep = [deep];
    assert.throws(() => makeStorable(deep), /nesting deeper than 1000 levels is not supported/);
    let ok: unknown = 1;
    for (let i = 0; i < MAX_STORABLE_DEPTH - 1; i++) ok = { a: ok };
    assert.equal(makeStorable(ok), ok);
  });
});
