import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compareByteOrder } from './object-key.js';

describe('compareByteOrder', () => {
  it('orders strings as their UTF-8 bytes do (PostgreSQL\'s "C" collation), without encoding them', () => {
    const words = ['', 'a', 'a-1', 'a0', 'aa', 'b', 'Z', 'é', 'ü', '\u7fff', '\ue000', '\uffff', '😀', '😀a', 'a😀', '\u{10ffff}', 'x\uffffy', 'x😀y'];
    for (const a of words) {
      for (const b of words) {
        const bytes = Math.sign(Buffer.compare(Buffer.from(a), Buffer.from(b)));
        assert.equal(Math.sign(compareByteOrder(a, b)), bytes, `${JSON.stringify(a)} vs ${JSON.stringify(b)}`);
      }
    }
  });
});
