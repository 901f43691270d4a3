import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DecodeError, goQuote, strictDecodingMessage } from './decode-error.js';

describe('DecodeError', () => {
  it('is an Error whose message is the client-facing text', () => {
    const err = new DecodeError('bad body');
    assert.ok(err instanceof Error);
    assert.equal(err.name, 'DecodeError');
    assert.equal(err.message, 'bad body');
    assert.equal(err.beforeKind, true);
    assert.equal(err.position, undefined);
  });

  it('computes 1-based line and column from an offset', () => {
    assert.deepEqual(DecodeError.at('ab\ncd\nef', 7, 'm').position, { offset: 7, line: 3, column: 2 });
    assert.deepEqual(DecodeError.at('ab\n', 2, 'm').position, { offset: 2, line: 1, column: 3 });
    assert.deepEqual(DecodeError.at('ab\n', 3, 'm').position, { offset: 3, line: 2, column: 1 });
  });

  it('clamps offsets outside the text', () => {
    assert.deepEqual(DecodeError.at('abc', 10, 'm').position, { offset: 3, line: 1, column: 4 });
    assert.deepEqual(DecodeError.at('abc', -1, 'm').position, { offset: 0, line: 1, column: 1 });
  });

  it('records whether the failure came before apiVersion/kind could be read', () => {
    assert.equal(DecodeError.at('x', 0, 'm', false).beforeKind, false);
  });
});

describe('goQuote', () => {
  const cases: Array<[string, string]> = [
    ['spec.replicas', '"spec.replicas"'],
    ['a"b', '"a\\"b"'],
    ['a\\b', '"a\\\\b"'],
    ['\t\n\r\u0007\b\f\v', '"\\t\\n\\r\\a\\b\\f\\v"'],
    ['\u0001\u007f', '"\\x01\\x7f"'],
    ['\u00a0\u2028', '"\\u00a0\\u2028"'],
    ['héllo ✓ 日本', '"héllo ✓ 日本"'],
    ['\u{1f600}', '"\u{1f600}"'],
    ['\u{e0001}', '"\\U000e0001"'],
    ['\ud800', '"\ufffd"'],
  ];
  for (const [input, expected] of cases) {
    it(`quotes ${JSON.stringify(input)} as Go's strconv.Quote does`, () => {
      assert.equal(goQuote(input), expected);
    });
  }
});

describe('strictDecodingMessage', () => {
  it('renders unknown and duplicate fields in the given order, as the e2e test expects', () => {
    const message = strictDecodingMessage([
      { kind: 'unknown', path: 'spec.unknownField' },
      { kind: 'duplicate', path: 'spec.replicas' },
    ]);
    assert.equal(message, 'strict decoding error: unknown field "spec.unknownField", duplicate field "spec.replicas"');
  });

  it('puts YAML duplicate-key errors first as one item', () => {
    const message = strictDecodingMessage([{ kind: 'unknown', path: 'spec.x' }], ['line 11: key "foo" already set in map', 'line 12: key "bar" already set in map']);
    assert.equal(
      message,
      'strict decoding error: yaml: unmarshal errors:\n  line 11: key "foo" already set in map\n  line 12: key "bar" already set in map, unknown field "spec.x"',
    );
  });

  it('quotes paths with special characters', () => {
    assert.equal(strictDecodingMessage([{ kind: 'duplicate', path: 'a"b' }]), 'strict decoding error: duplicate field "a\\"b"');
  });

  it('returns null when there is nothing to report', () => {
    assert.equal(strictDecodingMessage([]), null);
  });
});
