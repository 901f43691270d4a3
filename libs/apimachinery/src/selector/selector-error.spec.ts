import assert from 'node:assert/strict';
import { goQuote } from '../text/go-strings.js';
import { describe, it } from 'node:test';
import {
  SelectorError,
  aggregateText,
  invalidValueText,
  labelKeyErrors,
  labelValueErrors,
} from './selector-error.js';

const NAME_REGEX_MSG =
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character " +
  "(e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const SUBDOMAIN_MSG =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character " +
  "(e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const VALUE_MSG =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character " +
  "(e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

describe('SelectorError', () => {
  it('is an Error carrying the message unchanged', () => {
    const err = new SelectorError('found x');
    assert.ok(err instanceof Error);
    assert.equal(err.name, 'SelectorError');
    assert.equal(err.message, 'found x');
  });
});

describe('labelKeyErrors', () => {
  it('accepts plain and prefixed keys', () => {
    for (const key of ['a', 'A', '1', 'app', 'My_Name.v-2', 'example.com/MyName', 'a.b-c.d/x', 'k8s.io/x_y']) {
      assert.deepEqual(labelKeyErrors(key), [], key);
    }
  });

  it('accepts a name of exactly 63 bytes and rejects 64', () => {
    assert.deepEqual(labelKeyErrors('a'.repeat(63)), []);
    assert.deepEqual(labelKeyErrors('a'.repeat(64)), ['name part must be no more than 63 bytes']);
  });

  it('counts the name length in UTF-8 bytes, before the character check', () => {
    assert.deepEqual(labelKeyErrors('é'.repeat(32)), ['name part must be no more than 63 bytes', `name part ${NAME_REGEX_MSG}`]);
  });

  it('reports both emptiness and the pattern for an empty name', () => {
    assert.deepEqual(labelKeyErrors(''), ['name part must be non-empty', `name part ${NAME_REGEX_MSG}`]);
    assert.deepEqual(labelKeyErrors('example.com/'), ['name part must be non-empty', `name part ${NAME_REGEX_MSG}`]);
  });

  it('rejects names that do not start and end with an alphanumeric character', () => {
    for (const key of ['-a', 'a-', '_a', 'a.', 'a b', 'a:b']) {
      assert.deepEqual(labelKeyErrors(key), [`name part ${NAME_REGEX_MSG}`], key);
    }
  });

  it('rejects an empty prefix', () => {
    assert.deepEqual(labelKeyErrors('/a'), ['prefix part must be non-empty']);
  });

  it('rejects a prefix that is not a lowercase DNS subdomain', () => {
    assert.deepEqual(labelKeyErrors('Example.com/a'), [`prefix part ${SUBDOMAIN_MSG}`]);
    assert.deepEqual(labelKeyErrors('a_b/a'), [`prefix part ${SUBDOMAIN_MSG}`]);
    assert.deepEqual(labelKeyErrors('a..b/a'), [`prefix part ${SUBDOMAIN_MSG}`]);
  });

  it('accepts a 253-byte prefix and rejects 254', () => {
    const label = 'a'.repeat(63);
    const prefix253 = [label, label, label, 'a'.repeat(61)].join('.');
    assert.equal(prefix253.length, 253);
    assert.deepEqual(labelKeyErrors(`${prefix253}/x`), []);
    assert.deepEqual(labelKeyErrors(`${prefix253}a/x`), ['prefix part must be no more than 253 bytes']);
  });

  it('reports prefix and name errors together, prefix first', () => {
    assert.deepEqual(labelKeyErrors('A/-'), [`prefix part ${SUBDOMAIN_MSG}`, `name part ${NAME_REGEX_MSG}`]);
  });

  it('rejects more than one slash with the single whole-key message', () => {
    assert.deepEqual(labelKeyErrors('a/b/c'), [
      `a valid label key ${NAME_REGEX_MSG} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`,
    ]);
  });
});

describe('labelValueErrors', () => {
  it('accepts the empty value and ordinary values', () => {
    for (const value of ['', 'a', 'MyValue', 'my_value', '12345', 'a.b-c_d']) {
      assert.deepEqual(labelValueErrors(value), [], value);
    }
  });

  it('accepts 63 bytes and rejects 64', () => {
    assert.deepEqual(labelValueErrors('v'.repeat(63)), []);
    assert.deepEqual(labelValueErrors('v'.repeat(64)), ['must be no more than 63 bytes']);
  });

  it('rejects values with bad characters or edges', () => {
    for (const value of ['-a', 'a-', 'a/b', 'a b', '_']) {
      assert.deepEqual(labelValueErrors(value), [VALUE_MSG], value);
    }
  });

  it('reports length before pattern when both fail', () => {
    assert.deepEqual(labelValueErrors(`-${'v'.repeat(63)}`), ['must be no more than 63 bytes', VALUE_MSG]);
  });
});

describe('goQuote', () => {
  it('quotes and escapes like strconv.Quote', () => {
    assert.equal(goQuote('abc'), '"abc"');
    assert.equal(goQuote('a"b\\c'), '"a\\"b\\\\c"');
    assert.equal(goQuote('\n\t\r\x07\b\f\v'), '"\\n\\t\\r\\a\\b\\f\\v"');
    assert.equal(goQuote('\x00\x1f\x7f'), '"\\x00\\x1f\\x7f"');
  });

  it('keeps printable non-ASCII and escapes non-printable code points', () => {
    assert.equal(goQuote('é数😀'), '"é数😀"');
    assert.equal(goQuote('\u00a0\u200b'), '"\\u00a0\\u200b"');
    assert.equal(goQuote('\u{e0001}'), '"\\U000e0001"');
  });
});

describe('invalidValueText', () => {
  it('renders a string value quoted', () => {
    assert.equal(invalidValueText('key', 'a b', 'bad'), 'key: Invalid value: "a b": bad');
  });

  it('renders a slice as Go JSON with HTML characters escaped, and null for a nil slice', () => {
    assert.equal(invalidValueText('values', ['a', '<&>'], 'bad'), 'values: Invalid value: ["a","\\u003c\\u0026\\u003e"]: bad');
    assert.equal(invalidValueText('values', null, 'bad'), 'values: Invalid value: null: bad');
  });
});

describe('aggregateText', () => {
  it('returns a single message as is', () => {
    assert.equal(aggregateText(['one']), 'one');
  });

  it('brackets several messages and drops duplicates', () => {
    assert.equal(aggregateText(['one', 'two', 'one']), '[one, two]');
    assert.equal(aggregateText(['same', 'same']), 'same');
  });

  it('returns an empty string for no messages', () => {
    assert.equal(aggregateText([]), '');
  });
});
