import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DecodeError } from './decode-error.js';
import { orderTypedStrictIssues, parseJsonStrict } from './strict-json.js';

const PREFIX = "couldn't get version/kind; json parse error: ";

function decodeError(text: string): DecodeError {
  try {
    parseJsonStrict(text);
  } catch (err) {
    assert.ok(err instanceof DecodeError, `expected DecodeError, got ${String(err)}`);
    return err;
  }
  assert.fail(`expected ${JSON.stringify(text)} to be rejected`);
}

describe('parseJsonStrict: values', () => {
  it('returns the parsed value and no duplicates for a well-formed object', () => {
    const r = parseJsonStrict('{"apiVersion":"v1","kind":"ConfigMap","data":{"a":"x:y","b":"\\":"}}');
    assert.deepEqual(r.value, { apiVersion: 'v1', kind: 'ConfigMap', data: { a: 'x:y', b: '":' } });
    assert.deepEqual(r.duplicates, []);
  });

  it('accepts top-level scalars and arrays', () => {
    assert.deepEqual(parseJsonStrict(' 42 ').value, 42);
    assert.deepEqual(parseJsonStrict('null').value, null);
    assert.deepEqual(parseJsonStrict('[{"a":1}]').value, [{ a: 1 }]);
  });

  it('keeps the last value of a repeated key, as Go does', () => {
    assert.deepEqual(parseJsonStrict('{"spec":{"replicas":2,"replicas":3}}').value, { spec: { replicas: 3 } });
  });

  it('keeps __proto__ as an ordinary key', () => {
    const r = parseJsonStrict('{"__proto__":{"x":1},"__proto__":{"y":2}}');
    assert.deepEqual(Object.keys(r.value as object), ['__proto__']);
    assert.deepEqual(r.duplicates, ['__proto__']);
  });

  it('decodes integers beyond 2^53 to the nearest number, like JSON.parse', () => {
    const { value } = parseJsonStrict('{"n":9007199254740993}');
    assert.equal((value as { n: number }).n, 9007199254740992);
  });

  it('rejects a number beyond float64 with Go\'s unmarshal message', () => {
    const err = decodeError('{"a":[1,-1e400]}');
    assert.equal(err.message, 'json: cannot unmarshal number -1e400 into Go value of type float64');
    assert.equal(err.beforeKind, false);
  });
});

describe('parseJsonStrict: duplicate keys', () => {
  it('reports a duplicate at the root by its bare key', () => {
    assert.deepEqual(parseJsonStrict('{"kind":"A","kind":"B"}').duplicates, ['kind']);
  });

  it('reports nested duplicates as dotted paths in document order', () => {
    const r = parseJsonStrict('{"metadata":{"labels":{"a":"1","a":"2"}},"spec":{"replicas":2,"replicas":3}}');
    assert.deepEqual(r.duplicates, ['metadata.labels.a', 'spec.replicas']);
  });

  it('reports duplicates inside array elements with an index', () => {
    const r = parseJsonStrict('{"spec":{"containers":[{"name":"a"},{"name":"b","name":"c"}]}}');
    assert.deepEqual(r.duplicates, ['spec.containers[1].name']);
  });

  it('reports duplicates in nested arrays and under a top-level array', () => {
    assert.deepEqual(parseJsonStrict('{"m":[[{"k":1,"k":2}]]}').duplicates, ['m[0][0].k']);
    assert.deepEqual(parseJsonStrict('[{"a":1},{"a":1,"a":2}]').duplicates, ['[1].a']);
  });

  it('treats the same key in sibling objects as distinct', () => {
    assert.deepEqual(parseJsonStrict('{"a":{"x":1},"b":{"x":1},"c":[{"x":1},{"x":2}]}').duplicates, []);
  });

  it('reports a key repeated three times once', () => {
    assert.deepEqual(parseJsonStrict('{"a":1,"a":2,"a":3}').duplicates, ['a']);
  });

  it('reports a duplicated parent after duplicates inside its first occurrence', () => {
    assert.deepEqual(parseJsonStrict('{"a":{"b":1,"b":2},"a":{"c":1}}').duplicates, ['a.b', 'a']);
  });

  it('compares keys after unescaping', () => {
    assert.deepEqual(parseJsonStrict('{"a":1,"\\u0061":2}').duplicates, ['a']);
    assert.deepEqual(parseJsonStrict('{"a\\"b":1,"a\\u0022b":2}').duplicates, ['a"b']);
    assert.deepEqual(parseJsonStrict('{"a/b":1,"a\\/b":2}').duplicates, ['a/b']);
  });

  it('treats escaped lone surrogates as U+FFFD, as Go does', () => {
    assert.deepEqual(parseJsonStrict('{"\\ud800":1,"\\udc00":2}').duplicates, ['\ufffd']);
  });

  it('keeps dots inside keys unescaped in the path, as upstream does', () => {
    assert.deepEqual(parseJsonStrict('{"metadata":{"annotations":{"a.b/c":"1","a.b/c":"2"}}}').duplicates, ['metadata.annotations.a.b/c']);
  });

  it('finds duplicates when whitespace separates keys and colons', () => {
    assert.deepEqual(parseJsonStrict('{ "a" :\n1 ,\t"a"\r\n: 2 }').duplicates, ['a']);
  });

  it('is not misled by escaped quotes followed by colons inside strings', () => {
    const r = parseJsonStrict('{"a":"x\\":y","b":"\\":"}');
    assert.deepEqual(r.duplicates, []);
    assert.deepEqual(r.value, { a: 'x":y', b: '":' });
  });

  it('caps the report at 100 paths', () => {
    const body = '{' + Array.from({ length: 150 }, (_, i) => `"k${i}":{"x":1,"x":2}`).join(',') + '}';
    const r = parseJsonStrict(body);
    assert.equal(r.duplicates.length, 100);
    assert.equal(r.duplicates[99], 'k99.x');
  });
});

describe('parseJsonStrict: syntax errors', () => {
  const cases: Array<[string, string, number]> = [
    ['x', "invalid character 'x' looking for beginning of value", 0],
    ['', 'unexpected end of JSON input', 0],
    ['   ', 'unexpected end of JSON input', 3],
    ['{"a":1', 'unexpected end of JSON input', 6],
    ['{"a', 'unexpected end of JSON input', 3],
    ['{]', "invalid character ']' looking for beginning of object key string", 1],
    ['{"a":1,}', "invalid character '}' looking for beginning of object key string", 7],
    ['{"a" 1}', "invalid character '1' after object key", 5],
    ['{"a":1 "b":2}', `invalid character '"' after object key:value pair`, 7],
    ['[1 2]', "invalid character '2' after array element", 3],
    ['[1,]', "invalid character ']' looking for beginning of value", 3],
    ['{} {}', "invalid character '{' after top-level value", 3],
    ['01', "invalid character '1' after top-level value", 1],
    ['-', "invalid character ' ' in numeric literal", 1],
    ['-a', "invalid character 'a' in numeric literal", 1],
    ['1.', "invalid character ' ' after decimal point in numeric literal", 2],
    ['1.e5', "invalid character 'e' after decimal point in numeric literal", 2],
    ['1e+', "invalid character ' ' in exponent of numeric literal", 3],
    ['tru', "invalid character ' ' in literal true (expecting 'e')", 3],
    ['nul!', "invalid character '!' in literal null (expecting 'l')", 3],
    ['fals', "invalid character ' ' in literal false (expecting 'e')", 4],
    ['"a\tb"', "invalid character '\\t' in string literal", 2],
    ['"\\q"', "invalid character 'q' in string escape code", 2],
    ['"\\u12G4"', "invalid character 'G' in \\u hexadecimal character escape", 5],
    ['"abc', 'unexpected end of JSON input', 4],
    ["{'a':1}", "invalid character '\\'' looking for beginning of object key string", 1],
    ['\ufeff{}', "invalid character 'ï' looking for beginning of value", 0],
    ['[\u00a0]', "invalid character 'Â' looking for beginning of value", 1],
    ['\\', "invalid character '\\\\' looking for beginning of value", 0],
    ['\u0001', "invalid character '\\x01' looking for beginning of value", 0],
  ];
  for (const [text, message, offset] of cases) {
    it(`rejects ${JSON.stringify(text)} with Go's message "${message}"`, () => {
      const err = decodeError(text);
      assert.equal(err.message, PREFIX + message);
      assert.equal(err.position?.offset, offset);
      assert.equal(err.beforeKind, true);
    });
  }

  it('reports line and column of the offending character', () => {
    const err = decodeError('{\n  "a": 1,\n  "b": x\n}');
    assert.deepEqual(err.position, { offset: 19, line: 3, column: 8 });
  });

  it('accepts 10000 levels of nesting and rejects 10001 as Go does', () => {
    assert.equal(parseJsonStrict('['.repeat(10000) + ']'.repeat(10000)).duplicates.length, 0);
    const err = decodeError('{"a":' + '['.repeat(10000) + ']'.repeat(10000) + '}');
    assert.equal(err.message, PREFIX + "invalid character '[' exceeded max depth");
  });
});

describe('orderTypedStrictIssues', () => {
  const deployment = `{
    "apiVersion": "apps/v1", "kind": "Deployment",
    "spec": { "unknownField": "foo", "replicas": 2, "replicas": 3 }
  }`;

  it('interleaves unknown and duplicate fields in document order, as the e2e test expects', () => {
    const { duplicates } = parseJsonStrict(deployment);
    assert.deepEqual(orderTypedStrictIssues(deployment, ['spec.unknownField'], duplicates), [
      { kind: 'unknown', path: 'spec.unknownField' },
      { kind: 'duplicate', path: 'spec.replicas' },
    ]);
  });

  it('puts a duplicate before an unknown field that comes later', () => {
    const text = '{"spec":{"replicas":1,"replicas":2,"zzz":1}}';
    assert.deepEqual(orderTypedStrictIssues(text, ['spec.zzz'], ['spec.replicas']), [
      { kind: 'duplicate', path: 'spec.replicas' },
      { kind: 'unknown', path: 'spec.zzz' },
    ]);
  });

  it('drops duplicates of or inside unknown fields, which the typed decoder skips', () => {
    const text = '{"spec":{"x":{"a":1,"a":2},"x":1,"replicas":1,"replicas":2}}';
    const { duplicates } = parseJsonStrict(text);
    assert.deepEqual(duplicates, ['spec.x.a', 'spec.x', 'spec.replicas']);
    assert.deepEqual(orderTypedStrictIssues(text, ['spec.x'], duplicates), [
      { kind: 'unknown', path: 'spec.x' },
      { kind: 'duplicate', path: 'spec.replicas' },
    ]);
  });

  it('does not treat a sibling sharing a name prefix as inside an unknown field', () => {
    const text = '{"spec":{"x":1,"xy":{"a":1,"a":2}}}';
    assert.deepEqual(orderTypedStrictIssues(text, ['spec.x'], ['spec.xy.a']), [
      { kind: 'unknown', path: 'spec.x' },
      { kind: 'duplicate', path: 'spec.xy.a' },
    ]);
  });

  it('lists unknown fields alone without scanning when there are no duplicates', () => {
    assert.deepEqual(orderTypedStrictIssues('not json', ['a', 'b'], []), [
      { kind: 'unknown', path: 'a' },
      { kind: 'unknown', path: 'b' },
    ]);
  });
});
