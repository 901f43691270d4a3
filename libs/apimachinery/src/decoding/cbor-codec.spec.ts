import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decodeCbor } from './cbor-decode.js';
import { encodeCbor } from './cbor-encode.js';
import { DecodeError } from './decode-error.js';

const hex = (h: string) => Buffer.from(h, 'hex');

function fails(h: string, message: string, beforeKind: boolean): void {
  assert.throws(() => decodeCbor(hex(h)), (err: unknown) => err instanceof DecodeError && err.message === message && err.beforeKind === beforeKind);
}

describe('CBOR codec with upstream 1.35 modes', () => {
  it('encodes behind the self-described tag, strings and keys as byte strings, large integers as integers', () => {
    const out = encodeCbor({ a: 'b', n: 2 ** 40, m: -(2 ** 40), f: 1.5, z: null, t: true });
    assert.equal(out.subarray(0, 3).toString('hex'), 'd9d9f7');
    assert.ok(!out.includes(Buffer.from([0x61, 0x61])), 'no text string "a"');
    assert.ok(out.includes(Buffer.from([0x41, 0x61, 0x41, 0x62])), "'a': 'b' as byte strings");
    assert.ok(out.includes(hex('1b0000010000000000')), '2^40 as an integer');
    assert.deepEqual(decodeCbor(out), { a: 'b', n: 2 ** 40, m: -(2 ** 40), f: 1.5, z: null, t: true });
  });

  it('decodes tags as upstream: times to RFC 3339, expected later encodings, unknown tags to their content', () => {
    assert.equal(decodeCbor(hex('c074323030362d30312d30325431353a30343a30355a')), '2006-01-02T15:04:05Z');
    assert.equal(decodeCbor(hex('c11a43b940e5')), '2006-01-02T15:04:05Z');
    assert.equal(decodeCbor(hex('d64401020304')), 'AQIDBA==');
    assert.deepEqual(decodeCbor(hex('c48221196ab3')), [-2, 27315]);
    assert.equal(decodeCbor(hex('7f626865636c6c6fff')), 'hello');
    assert.equal(decodeCbor(hex('f94200')), 3);
  });

  it('refuses what upstream refuses, with its texts', () => {
    fails('a2614101614102', 'unable to determine group/version/kind: cbor: found duplicate map key "A" at map element index 1', true);
    fails('a16161a2614101614102', 'cbor: found duplicate map key "A" at map element index 1', false);
    fails('a1fb40091eb851eb851f63706965', 'unable to determine group/version/kind: cbor: cannot unmarshal primitives into Go value of type string', true);
    fails('c249010000000000000000', 'unable to determine group/version/kind: cbor: data item of cbor type tag is not accepted by protocol: bignum', true);
    fails('f7', 'cbor: data item of cbor type primitives is not accepted by protocol: simple value 23 is not recognized', false);
    fails('fb7ff8000000000000', 'cbor: data item of cbor type primitives is not accepted by protocol: floating-point NaN', false);
    fails('f97c00', 'cbor: data item of cbor type primitives is not accepted by protocol: floating-point infinity', false);
    fails('1bffffffffffffffff', "cbor: cannot unmarshal positive integer into Go value of type int64 (18446744073709551615 overflows Go's int64)", false);
    fails('6180', 'cbor: invalid UTF-8 string', false);
    fails('c054323030362d30312d30325431353a30343a30355a', 'unable to determine group/version/kind: cbor: tag number 0 must be followed by text string, got byte string', true);
    fails('a1616101ff', 'unable to determine group/version/kind: cbor: 1 bytes of extraneous data starting at index 4', true);
    fails('a161', 'unable to determine group/version/kind: unexpected EOF', true);
    fails('81'.repeat(65) + '00', 'unable to determine group/version/kind: cbor: exceeded max nested level 64', true);
    fails('990401' + '00'.repeat(1025), 'unable to determine group/version/kind: cbor: exceeded max number of elements 1024 for CBOR array', true);
  });
});
