import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fieldSelectorFields, matchesFields, parseFieldSelector, renderFieldSelector } from './field-selector.js';
import { SelectorError } from './selector-error.js';

function parseError(s: string): string {
  try {
    parseFieldSelector(s);
  } catch (err) {
    assert.ok(err instanceof SelectorError, `expected SelectorError for ${JSON.stringify(s)}`);
    return err.message;
  }
  assert.fail(`expected ${JSON.stringify(s)} to be rejected`);
}

function matches(selector: string, fields: Record<string, string>): boolean {
  return matchesFields(parseFieldSelector(selector), fields);
}

describe('parseFieldSelector', () => {
  it('returns no requirements for the empty selector and for empty terms', () => {
    assert.deepEqual(parseFieldSelector(''), { requirements: [] });
    assert.deepEqual(parseFieldSelector(',,'), { requirements: [] });
  });

  it('parses =, == and !=, storing == as =', () => {
    assert.deepEqual(parseFieldSelector('a=1,b==2,c!=3').requirements, [
      { field: 'a', operator: '=', value: '1' },
      { field: 'b', operator: '=', value: '2' },
      { field: 'c', operator: '!=', value: '3' },
    ]);
  });

  it('orders requirements by the raw text of their terms', () => {
    assert.deepEqual(
      parseFieldSelector('status.phase!=Running,metadata.name=x,metadata.namespace==ns').requirements.map((r) => r.field),
      ['metadata.name', 'metadata.namespace', 'status.phase'],
    );
  });

  it('sorts terms in code point order, as Go sorts UTF-8 bytes', () => {
    assert.deepEqual(
      parseFieldSelector('\uff21=1,\u{1f600}=2').requirements.map((r) => r.field),
      ['\uff21', '\u{1f600}'],
    );
  });

  it('splits at the first operator, trying != and == before =', () => {
    assert.deepEqual(parseFieldSelector('a!b=c').requirements, [{ field: 'a!b', operator: '=', value: 'c' }]);
    assert.deepEqual(parseFieldSelector('a=b!c').requirements, [{ field: 'a', operator: '=', value: 'b!c' }]);
    assert.deepEqual(parseFieldSelector('a==b').requirements, [{ field: 'a', operator: '=', value: 'b' }]);
    assert.deepEqual(parseFieldSelector('a=!b').requirements, [{ field: 'a', operator: '=', value: '!b' }]);
  });

  it('keeps whitespace in fields and values', () => {
    assert.deepEqual(parseFieldSelector(' a = b ').requirements, [{ field: ' a ', operator: '=', value: ' b ' }]);
  });

  it('allows an empty value', () => {
    assert.deepEqual(parseFieldSelector('spec.nodeName=').requirements, [{ field: 'spec.nodeName', operator: '=', value: '' }]);
  });

  it('keeps a term with an empty field but drops one with an empty field and value', () => {
    assert.deepEqual(parseFieldSelector('=x').requirements, [{ field: '', operator: '=', value: 'x' }]);
    assert.deepEqual(parseFieldSelector('=,a=b,!=').requirements, [{ field: 'a', operator: '=', value: 'b' }]);
  });

  it('unescapes \\, \\= and \\\\ in values', () => {
    assert.deepEqual(parseFieldSelector('k=a\\,b\\=c\\\\d,k2=v2').requirements, [
      { field: 'k2', operator: '=', value: 'v2' },
      { field: 'k', operator: '=', value: 'a,b=c\\d' },
    ]);
  });

  it('does not split at an escaped comma and keeps backslashes in the field', () => {
    assert.deepEqual(parseFieldSelector('a\\,b=c').requirements, [{ field: 'a\\,b', operator: '=', value: 'c' }]);
  });

  it('handles multi-byte fields and values', () => {
    assert.deepEqual(parseFieldSelector('함=수,목=록').requirements, [
      { field: '목', operator: '=', value: '록' },
      { field: '함', operator: '=', value: '수' },
    ]);
  });
});

describe('parseFieldSelector: errors', () => {
  it('throws a SelectorError', () => {
    assert.throws(() => parseFieldSelector('x'), SelectorError);
  });

  it("rejects a term without an operator, quoting the whole selector", () => {
    assert.equal(parseError('x'), "invalid selector: 'x'; can't understand 'x'");
    assert.equal(parseError('a=b,c'), "invalid selector: 'a=b,c'; can't understand 'c'");
    assert.equal(parseError('a!b'), "invalid selector: 'a!b'; can't understand 'a!b'");
  });

  it('rejects an unescaped = in a value, printing its code point', () => {
    assert.equal(parseError('a=b=c'), 'invalid field selector: unescaped character in value: 61');
    assert.equal(parseError('a===b'), 'invalid field selector: unescaped character in value: 61');
    assert.equal(parseError('a!==b'), 'invalid field selector: unescaped character in value: 61');
    assert.equal(parseError('a=b\\,c=d'), 'invalid field selector: unescaped character in value: 61');
  });

  it('rejects an unknown escape sequence', () => {
    assert.equal(parseError('a=\\q'), 'invalid field selector: invalid escape sequence: \\q');
    assert.equal(parseError('a=\\😀'), 'invalid field selector: invalid escape sequence: \\😀');
  });

  it('rejects a trailing backslash', () => {
    assert.equal(parseError('a=b\\'), 'invalid field selector: invalid escape sequence: \\');
    assert.equal(parseError('a=\\\\\\'), 'invalid field selector: invalid escape sequence: \\');
  });

  it('reports the error of the first term in sorted order', () => {
    assert.equal(parseError('b,a=\\x'), 'invalid field selector: invalid escape sequence: \\x');
    assert.equal(parseError('b=\\x,a'), "invalid selector: 'b=\\x,a'; can't understand 'a'");
  });
});

describe('matchesFields', () => {
  const fields = { 'metadata.name': 'web', 'metadata.namespace': 'default', 'status.phase': '' };

  it('matches everything with an empty selector', () => {
    assert.equal(matches('', {}), true);
  });

  it('matches = and == on equal values', () => {
    assert.equal(matches('metadata.name=web', fields), true);
    assert.equal(matches('metadata.name==web', fields), true);
    assert.equal(matches('metadata.name=db', fields), false);
  });

  it('matches != on different values', () => {
    assert.equal(matches('metadata.name!=db', fields), true);
    assert.equal(matches('metadata.name!=web', fields), false);
  });

  it('compares a missing field as the empty string', () => {
    assert.equal(matches('spec.nodeName=', fields), true);
    assert.equal(matches('spec.nodeName!=', fields), false);
    assert.equal(matches('spec.nodeName=n1', fields), false);
    assert.equal(matches('spec.nodeName!=n1', fields), true);
  });

  it('ignores inherited object properties', () => {
    assert.equal(matches('constructor=', {}), true);
  });

  it('requires every term to hold', () => {
    assert.equal(matches('metadata.name=web,metadata.namespace=default', fields), true);
    assert.equal(matches('metadata.name=web,metadata.namespace!=default', fields), false);
  });

  it('matches unescaped values', () => {
    assert.equal(matches('k=a\\,b', { k: 'a,b' }), true);
  });
});

describe('fieldSelectorFields', () => {
  it('lists each field once, in requirement order', () => {
    assert.deepEqual(fieldSelectorFields(parseFieldSelector('spec.x=1,metadata.name=a,metadata.name!=b')), ['metadata.name', 'spec.x']);
  });

  it('returns an empty list for an empty selector', () => {
    assert.deepEqual(fieldSelectorFields(parseFieldSelector('')), []);
  });
});

describe('renderFieldSelector', () => {
  it('renders terms joined by commas, == as =', () => {
    assert.equal(renderFieldSelector(parseFieldSelector('b!=2,a==1')), 'a=1,b!=2');
  });

  it('escapes backslash, comma and equals in values', () => {
    assert.equal(renderFieldSelector({ requirements: [{ field: 'k', operator: '=', value: 'a,b=c\\' }] }), 'k=a\\,b\\=c\\\\');
  });

  it('renders an empty selector as an empty string', () => {
    assert.equal(renderFieldSelector({ requirements: [] }), '');
  });

  it('round-trips through the parser', () => {
    for (const s of ['', 'a=b', 'a=\\,\\=\\\\,b!=', 'metadata.name!=x,status.phase=Running']) {
      const sel = parseFieldSelector(s);
      assert.deepEqual(parseFieldSelector(renderFieldSelector(sel)), sel, s);
    }
  });
});
