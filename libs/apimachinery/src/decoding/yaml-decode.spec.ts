import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DecodeError } from './decode-error.js';
import { parseYamlStrict } from './yaml-decode.js';

function decodeError(text: string): DecodeError {
  try {
    parseYamlStrict(text);
  } catch (err) {
    assert.ok(err instanceof DecodeError, `expected DecodeError, got ${String(err)}`);
    return err;
  }
  assert.fail(`expected ${JSON.stringify(text)} to be rejected`);
}

function valueOf(text: string): unknown {
  return parseYamlStrict(text).value;
}

describe('parseYamlStrict: documents', () => {
  it('decodes a manifest into plain JSON values', () => {
    const text = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  key: value\nlist:\n- 1\n- two\n';
    assert.deepEqual(parseYamlStrict(text), {
      value: { apiVersion: 'v1', data: { key: 'value' }, kind: 'ConfigMap', list: [1, 'two'], metadata: { name: 'cm' } },
      duplicates: [],
    });
  });

  it('decodes an empty body or a comment-only body to null', () => {
    assert.equal(valueOf(''), null);
    assert.equal(valueOf('# nothing\n'), null);
  });

  it('accepts JSON, which is YAML', () => {
    assert.deepEqual(valueOf('{"a": [1, {"b": null}]}'), { a: [1, { b: null }] });
  });

  it('orders object keys as Go\'s JSON encoder does', () => {
    assert.deepEqual(Object.keys(valueOf('spec: 1\nkind: K\napiVersion: v\n') as object), ['apiVersion', 'kind', 'spec']);
  });

  it('allows a leading document marker and a trailing empty document', () => {
    assert.deepEqual(valueOf('---\na: 1\n---\n'), { a: 1 });
    assert.deepEqual(valueOf('a: 1\n...\n'), { a: 1 });
  });

  it('rejects a second document with a 400-worthy message naming its line', () => {
    const err = decodeError('a: 1\n---\nb: 2\n');
    assert.equal(err.message, 'yaml: a request body must hold a single document, found another at line 3');
    assert.equal(err.position?.line, 3);
  });

  it('rejects a syntax error with its line', () => {
    const err = decodeError('a: 1\nb: [1, 2\nc: 3\n');
    assert.match(err.message, /^yaml: line \d+: /);
    assert.equal(err.beforeKind, true);
  });

  it('rejects tabs used as indentation', () => {
    assert.match(decodeError('a:\n\tb: 1\n').message, /^yaml: line 2: /);
  });
});

describe('parseYamlStrict: scalars as Kubernetes resolves them', () => {
  it('keeps dates and timestamps as strings', () => {
    assert.deepEqual(valueOf('d: 2024-01-01\nt: 2024-01-01T10:00:00Z\ns: 2001-12-14 21:59:43.10\n'), {
      d: '2024-01-01',
      s: '2001-12-14 21:59:43.10',
      t: '2024-01-01T10:00:00Z',
    });
  });

  it('resolves YAML 1.1 booleans, including yes/no/on/off/y/n', () => {
    assert.deepEqual(valueOf('a: yes\nb: No\nc: ON\nd: off\ne: y\nf: N\ng: true\nh: False\n'), {
      a: true, b: false, c: true, d: false, e: true, f: false, g: true, h: false,
    });
  });

  it('keeps quoted and block scalars as strings', () => {
    assert.deepEqual(valueOf('a: "yes"\nb: \'10\'\nc: |\n  true\nd: >-\n  12\n'), { a: 'yes', b: '10', c: 'true\n', d: '12' });
  });

  it('resolves nulls', () => {
    assert.deepEqual(valueOf('a: ~\nb: null\nc: NULL\nd:\n'), { a: null, b: null, c: null, d: null });
  });

  it('resolves integers with Go\'s base prefixes, leading-zero octal and underscores', () => {
    assert.deepEqual(valueOf('a: 0x1F\nb: 010\nc: 0o17\nd: 0b101\ne: 1_000\nf: -0x10\ng: +12\nh: 08\n'), {
      a: 31, b: 8, c: 15, d: 5, e: 1000, f: -16, g: 12, h: 8,
    });
  });

  it('resolves floats and leaves out-of-range ones as strings, as Go\'s ParseFloat fails on them', () => {
    assert.deepEqual(valueOf('a: 1.5\nb: .5\nc: 1e3\nd: -2.5E-1\ne: 1e400\nf: 1.\n'), { a: 1.5, b: 0.5, c: 1000, d: -0.25, e: '1e400', f: 1 });
  });

  it('decodes integers beyond 2^53, up to uint64, to the nearest number', () => {
    assert.deepEqual(valueOf('a: 9223372036854775807\nb: 18446744073709551615\n'), { a: 9223372036854775807, b: 18446744073709551615 });
  });

  it('leaves integers beyond uint64 that are not decimal floats as strings', () => {
    assert.deepEqual(valueOf('a: 0x1FFFFFFFFFFFFFFFF\n'), { a: '0x1FFFFFFFFFFFFFFFF' });
  });

  it('leaves sexagesimal-looking and other plain text as strings', () => {
    assert.deepEqual(valueOf('a: 22:22\nb: 1.2.3\nc: nginx:1.25\nd: .inf.x\n'), { a: '22:22', b: '1.2.3', c: 'nginx:1.25', d: '.inf.x' });
  });

  it('applies explicit core tags and ignores custom ones', () => {
    assert.deepEqual(valueOf('a: !!int "12"\nb: !!str 12\nc: !!float 3\nd: !foo 5\ne: !!binary aGVsbG8=\nf: !!timestamp 2024-01-01\n'), {
      a: 12, b: '12', c: 3, d: '5', e: 'hello', f: '2024-01-01',
    });
  });

  it('rejects a value that does not fit its explicit tag, with yaml.v2\'s message', () => {
    assert.equal(decodeError('a: !!int abc\n').message, 'yaml: cannot decode !!str `abc` as a !!int');
    assert.equal(decodeError('a: !!binary "!!"\n').message, 'yaml: !!binary value contains invalid base64 data');
  });

  it('rejects infinities and NaN values, which Go\'s JSON encoder cannot write', () => {
    assert.equal(decodeError('a: .inf\n').message, 'json: unsupported value: +Inf');
    assert.equal(decodeError('a: [-.Inf]\n').message, 'json: unsupported value: -Inf');
    assert.equal(decodeError('a: .nan\n').message, 'json: unsupported value: NaN');
  });
});

describe('parseYamlStrict: keys', () => {
  it('stringifies integer, boolean and float keys as sigs.k8s.io/yaml does', () => {
    assert.deepEqual(valueOf('1: a\n0x10: b\nyes: c\nfalse: d\n1.5: e\n1000000.0: f\n0.1: g\n.inf: h\n'), {
      1: 'a', 16: 'b', true: 'c', false: 'd', '1.5': 'e', '1e+06': 'f', '0.1': 'g', '.inf': 'h',
    });
  });

  it('resolves y and n keys to booleans, as yaml.v2 does', () => {
    assert.deepEqual(valueOf('y: 1\nn: 2\n'), { true: 1, false: 2 });
  });

  it('keeps __proto__ and constructor as own keys', () => {
    const v = valueOf('__proto__: 1\nconstructor: 2\n') as Record<string, unknown>;
    assert.deepEqual(Object.keys(v), ['__proto__', 'constructor']);
    assert.equal(Object.getPrototypeOf(v), Object.prototype);
  });

  it('rejects a null key', () => {
    assert.equal(decodeError('~: 1\n').message, 'unsupported map key of type: %!s(<nil>), key: <nil>, value: 1');
  });

  it('rejects a collection used as a key', () => {
    assert.match(decodeError('? [a]\n: 1\n').message, /^yaml: invalid map key: \[\]interface \{\}\{"a"\}$/);
  });
});

describe('parseYamlStrict: duplicate keys', () => {
  it('reports a duplicate with the line of its value, in yaml.v2 wording', () => {
    const text = '\napiVersion: v1\nkind: K\nmetadata:\n  name: n\n  finalizers:\n  - f\nspec:\n  unknown: uk1\n  foo: foo1\n  foo: foo2\n';
    const r = parseYamlStrict(text);
    assert.deepEqual(r.duplicates, ['line 11: key "foo" already set in map']);
    assert.deepEqual((r.value as { spec: unknown }).spec, { foo: 'foo2', unknown: 'uk1' });
  });

  it('uses the line where a block value starts', () => {
    assert.deepEqual(parseYamlStrict('a:\n  b: 1\na:\n\n  c: 2\n').duplicates, ['line 5: key "a" already set in map']);
  });

  it('reports duplicates in nested maps, sequences and flow maps in document order', () => {
    const text = 'x:\n- nm: 1\n  nm: 2\ny: {p: 1, p: 2}\nx: 3\n';
    assert.deepEqual(parseYamlStrict(text).duplicates, [
      'line 3: key "nm" already set in map',
      'line 4: key "p" already set in map',
      'line 5: key "x" already set in map',
    ]);
  });

  it('compares keys after resolution: yes and true, 1 and 0x1 collide; "1" and 1 do not', () => {
    assert.deepEqual(parseYamlStrict('yes: 1\ntrue: 2\n').duplicates, ['line 2: key true already set in map']);
    assert.deepEqual(parseYamlStrict('1: a\n0x1: b\n').duplicates, ['line 2: key 1 already set in map']);
    assert.deepEqual(parseYamlStrict('"1": a\n1: b\n').duplicates, []);
  });

  it('compares keys after unescaping and quotes them like Go', () => {
    assert.deepEqual(parseYamlStrict('"a\\"b": 1\n\'a"b\': 2\n').duplicates, ['line 2: key "a\\"b" already set in map']);
    assert.deepEqual(parseYamlStrict('"\\t": 1\n"\\x09": 2\n').duplicates, ['line 2: key "\\t" already set in map']);
  });

  it('reports every repeat, not just the first', () => {
    assert.deepEqual(parseYamlStrict('a: 1\na: 2\na: 3\n').duplicates, ['line 2: key "a" already set in map', 'line 3: key "a" already set in map']);
  });
});

describe('parseYamlStrict: anchors and merges', () => {
  it('expands aliases into independent copies', () => {
    const v = valueOf('a: &x {k: [1]}\nb: *x\n') as { a: { k: number[] }; b: { k: number[] } };
    assert.deepEqual(v.b, { k: [1] });
    assert.notEqual(v.a.k, v.b.k);
  });

  it('merges << maps with explicit keys overriding, and reports the override as yaml.v2 strict does', () => {
    const r = parseYamlStrict('base: &b {k: 1, j: 2}\nc:\n  <<: *b\n  k: 3\n');
    assert.deepEqual((r.value as { c: unknown }).c, { j: 2, k: 3 });
    assert.deepEqual(r.duplicates, ['line 4: key "k" already set in map']);
  });

  it('merges a sequence of maps with earlier maps taking precedence', () => {
    const v = valueOf('a: &a {k: 1}\nb: &b {k: 2, j: 2}\nc:\n  <<: [*a, *b]\n') as { c: unknown };
    assert.deepEqual(v.c, { j: 2, k: 1 });
  });

  it('rejects merging a scalar', () => {
    assert.equal(decodeError('a: &a 1\nb:\n  <<: *a\n').message, 'yaml: map merge requires map or sequence of maps as the value');
  });

  it('rejects an unknown anchor and a self-referencing one', () => {
    assert.equal(decodeError('a: *nope\n').message, "yaml: unknown anchor 'nope' referenced");
    assert.equal(decodeError('a: &a [*a]\n').message, "yaml: anchor 'a' value contains itself");
  });

  it('rejects an alias bomb', () => {
    const lines = ['a: &a [x, x, x, x, x, x, x, x, x, x]'];
    for (let i = 1; i < 8; i++) {
      const prev = String.fromCharCode(96 + i);
      lines.push(`${String.fromCharCode(97 + i)}: &${String.fromCharCode(97 + i)} [${Array(10).fill('*' + prev).join(', ')}]`);
    }
    assert.equal(decodeError(lines.join('\n') + '\n').message, 'yaml: document contains excessive aliasing');
  });
});
