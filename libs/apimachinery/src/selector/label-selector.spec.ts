import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  type LabelSelector,
  labelSelectorFromMetav1,
  matchesLabels,
  parseLabelSelector,
  renderLabelSelector,
} from './label-selector.js';
import { SelectorError } from './selector-error.js';

const KEY_NAME_MSG =
  "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character " +
  "(e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const VALUE_MSG =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character " +
  "(e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";
const MULTI_SLASH_MSG =
  "a valid label key must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character " +
  "(e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') " +
  "with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')";
const OPERATORS = 'in, notin, =, ==, !=, gt, lt';

function parseError(s: string): string {
  try {
    parseLabelSelector(s);
  } catch (err) {
    assert.ok(err instanceof SelectorError, `expected SelectorError for ${JSON.stringify(s)}`);
    return err.message;
  }
  assert.fail(`expected ${JSON.stringify(s)} to be rejected`);
}

function metav1Error(sel: Parameters<typeof labelSelectorFromMetav1>[0]): string {
  try {
    labelSelectorFromMetav1(sel);
  } catch (err) {
    assert.ok(err instanceof SelectorError);
    return err.message;
  }
  assert.fail('expected the selector to be rejected');
}

function matches(selector: string, labels: Record<string, string> | undefined): boolean {
  return matchesLabels(parseLabelSelector(selector), labels);
}

describe('parseLabelSelector: grammar', () => {
  it('returns no requirements for the empty and all-blank selector', () => {
    assert.deepEqual(parseLabelSelector(''), { requirements: [] });
    assert.deepEqual(parseLabelSelector(' \t\r\n '), { requirements: [] });
  });

  it('parses every operator', () => {
    const sel = parseLabelSelector('a=1,b==2,c!=3,d in (x,y),e notin (z),f,!g,h>4,i<5');
    assert.deepEqual(sel.requirements, [
      { key: 'a', operator: 'Equals', values: ['1'] },
      { key: 'b', operator: 'DoubleEquals', values: ['2'] },
      { key: 'c', operator: 'NotEquals', values: ['3'] },
      { key: 'd', operator: 'In', values: ['x', 'y'] },
      { key: 'e', operator: 'NotIn', values: ['z'] },
      { key: 'f', operator: 'Exists', values: [] },
      { key: 'g', operator: 'DoesNotExist', values: [] },
      { key: 'h', operator: 'GreaterThan', values: ['4'] },
      { key: 'i', operator: 'LessThan', values: ['5'] },
    ]);
  });

  it('tolerates whitespace around keys, operators, values and commas', () => {
    const sel = parseLabelSelector('  x = a ,\ty != b , z  in  ( c , d ) ,\n! w ');
    assert.equal(renderLabelSelector(sel), '!w,x=a,y!=b,z in (c,d)');
  });

  it('sorts requirements by key, keeping the written order for equal keys', () => {
    const sel = parseLabelSelector('b=1,a=2,b!=3');
    assert.deepEqual(
      sel.requirements.map((r) => `${r.key}:${r.operator}`),
      ['a:Equals', 'b:Equals', 'b:NotEquals'],
    );
  });

  it('sorts and de-duplicates set values', () => {
    assert.deepEqual(parseLabelSelector('x in (c,a,b,a)').requirements[0].values, ['a', 'b', 'c']);
  });

  it('reads an omitted exact value as the empty value', () => {
    assert.deepEqual(parseLabelSelector('x=').requirements[0].values, ['']);
    assert.deepEqual(parseLabelSelector('x= ,z!=').requirements, [
      { key: 'x', operator: 'Equals', values: [''] },
      { key: 'z', operator: 'NotEquals', values: [''] },
    ]);
  });

  it('reads empty set members as the empty value', () => {
    assert.deepEqual(parseLabelSelector('x in ()').requirements[0].values, ['']);
    assert.deepEqual(parseLabelSelector('x in (a,)').requirements[0].values, ['', 'a']);
    assert.deepEqual(parseLabelSelector('x in (,a)').requirements[0].values, ['', 'a']);
    assert.deepEqual(parseLabelSelector('x notin (a,,b)').requirements[0].values, ['', 'a', 'b']);
  });

  it('accepts runs of consecutive commas inside a set', () => {
    assert.deepEqual(parseLabelSelector('x in (a,,)').requirements[0].values, ['', 'a']);
    assert.deepEqual(parseLabelSelector('x in (,,)').requirements[0].values, ['']);
    assert.deepEqual(parseLabelSelector('x in (a,,a,,a,,a,,)').requirements[0].values, ['', 'a']);
  });

  it('treats in and notin as plain words outside the operator position', () => {
    assert.deepEqual(parseLabelSelector('in in (in,notin)').requirements, [{ key: 'in', operator: 'In', values: ['in', 'notin'] }]);
    assert.deepEqual(parseLabelSelector('notin=in').requirements, [{ key: 'notin', operator: 'Equals', values: ['in'] }]);
    assert.deepEqual(parseLabelSelector('!in').requirements, [{ key: 'in', operator: 'DoesNotExist', values: [] }]);
  });

  it('accepts prefixed keys', () => {
    assert.deepEqual(parseLabelSelector('app.kubernetes.io/name=web').requirements[0].key, 'app.kubernetes.io/name');
  });

  it('stops reading at a NUL character at the start of a token', () => {
    assert.deepEqual(parseLabelSelector('\0a=b'), { requirements: [] });
    assert.deepEqual(parseLabelSelector('a=b \0 c=d').requirements, [{ key: 'a', operator: 'Equals', values: ['b'] }]);
  });
});

describe('parseLabelSelector: syntax errors', () => {
  it('throws a SelectorError', () => {
    assert.throws(() => parseLabelSelector('a in b'), SelectorError);
  });

  it('requires parentheses after in and notin', () => {
    assert.equal(parseError('a in b'), "unable to parse requirement: found 'b' expected: '('");
    assert.equal(parseError('a notin'), "unable to parse requirement: found '' expected: '('");
  });

  it('rejects a selector starting with a non-identifier', () => {
    assert.equal(parseError(','), "found ',', expected: !, identifier, or 'end of string'");
    assert.equal(parseError('=a'), "found '=', expected: !, identifier, or 'end of string'");
    assert.equal(parseError('(a)'), "found '(', expected: !, identifier, or 'end of string'");
  });

  it('rejects a dangling comma', () => {
    assert.equal(parseError('a,'), "found '', expected: identifier after ','");
    assert.equal(parseError('a,,b'), "found ',', expected: identifier after ','");
  });

  it('rejects trailing tokens after a complete requirement', () => {
    assert.equal(parseError('x==a==b'), "found '==', expected: ',' or 'end of string'");
    assert.equal(parseError('!x=a'), "found '=', expected: ',' or 'end of string'");
    assert.equal(parseError('x in (a) y'), "found 'y', expected: ',' or 'end of string'");
  });

  it('rejects a missing or unknown operator', () => {
    assert.equal(parseError('x y'), `unable to parse requirement: found 'y', expected: ${OPERATORS}`);
    assert.equal(parseError('x ('), `unable to parse requirement: found '(', expected: ${OPERATORS}`);
    assert.equal(parseError('x !'), `unable to parse requirement: found '!', expected: ${OPERATORS}`);
  });

  it('rejects a bang without a key', () => {
    assert.equal(parseError('!'), "unable to parse requirement: found '', expected: identifier");
    assert.equal(parseError('!!a'), "unable to parse requirement: found '!', expected: identifier");
    assert.equal(parseError('!=a'), "found '!=', expected: !, identifier, or 'end of string'");
  });

  it('rejects a non-identifier exact value', () => {
    assert.equal(parseError('x=('), "unable to parse requirement: found '(', expected: identifier");
    assert.equal(parseError('a===b'), "unable to parse requirement: found '=', expected: identifier");
    assert.equal(parseError('a=!b'), "unable to parse requirement: found '!', expected: identifier");
  });

  it('rejects malformed value sets', () => {
    assert.equal(parseError('x in ('), "unable to parse requirement: found '', expected: ',', ')' or identifier");
    assert.equal(parseError('x in (='), "unable to parse requirement: found '=', expected: ',', ')' or identifier");
    assert.equal(parseError('x in (a b)'), "unable to parse requirement: found 'b', expected: ',' or ')'");
    assert.equal(parseError('x in (a'), "unable to parse requirement: found '', expected: ',' or ')'");
    assert.equal(parseError('x in (a,'), "unable to parse requirement: found '', expected: ',', or identifier");
    assert.equal(parseError('x in (a,='), "unable to parse requirement: found '=', expected: ',', or identifier");
  });

  it('treats a NUL inside a word as a separator', () => {
    assert.equal(parseError('a\0b'), `unable to parse requirement: found 'b', expected: ${OPERATORS}`);
  });
});

describe('parseLabelSelector: validation errors', () => {
  it('rejects an invalid key with the nil-path field error', () => {
    assert.equal(parseError('-a'), `unable to parse requirement: <nil>: Invalid value: "-a": ${KEY_NAME_MSG}`);
    assert.equal(parseError('!-a'), `unable to parse requirement: <nil>: Invalid value: "-a": ${KEY_NAME_MSG}`);
  });

  it('rejects a label key longer than 63 characters', () => {
    const key = 'k'.repeat(64);
    assert.equal(parseError(`${key}=v`), `unable to parse requirement: <nil>: Invalid value: "${key}": name part must be no more than 63 bytes`);
  });

  it('joins several key problems with "; "', () => {
    assert.equal(
      parseError('a/'),
      `unable to parse requirement: <nil>: Invalid value: "a/": name part must be non-empty; ${KEY_NAME_MSG}`,
    );
  });

  it('rejects a key with more than one slash', () => {
    assert.equal(parseError('a/b/c'), `unable to parse requirement: <nil>: Invalid value: "a/b/c": ${MULTI_SLASH_MSG}`);
  });

  it('rejects an empty or uppercase prefix', () => {
    assert.equal(parseError('/a'), 'unable to parse requirement: <nil>: Invalid value: "/a": prefix part must be non-empty');
    assert.match(parseError('Example.com/a'), /^unable to parse requirement: <nil>: Invalid value: "Example.com\/a": prefix part a lowercase RFC 1123 subdomain/);
  });

  it('quotes a non-ASCII key as Go does', () => {
    assert.equal(parseError('é'), `unable to parse requirement: <nil>: Invalid value: "é": ${KEY_NAME_MSG}`);
  });

  it('rejects an invalid value at values[i][key]', () => {
    assert.equal(parseError('a=-b'), `unable to parse requirement: values[0][a]: Invalid value: "-b": ${VALUE_MSG}`);
    assert.equal(parseError('x=a||y=b'), `unable to parse requirement: values[0][x]: Invalid value: "a||y": ${VALUE_MSG}`);
  });

  it('rejects a label value longer than 63 characters', () => {
    const value = 'v'.repeat(64);
    assert.equal(parseError(`a!=${value}`), `unable to parse requirement: values[0][a]: Invalid value: "${value}": must be no more than 63 bytes`);
  });

  it('aggregates several bad set values, indexed after sorting', () => {
    assert.equal(
      parseError('x in (ok,-b,-a)'),
      'unable to parse requirement: ' +
        `[values[0][x]: Invalid value: "-a": ${VALUE_MSG}, values[1][x]: Invalid value: "-b": ${VALUE_MSG}]`,
    );
  });

  it('requires an integer for > and <', () => {
    assert.equal(parseError('x<a'), `unable to parse requirement: values[0]: Invalid value: "a": for 'Gt', 'Lt' operators, the value must be an integer`);
    assert.equal(
      parseError('x>99999999999999999999'),
      `unable to parse requirement: values[0]: Invalid value: "99999999999999999999": for 'Gt', 'Lt' operators, the value must be an integer`,
    );
  });

  it('rejects a negative bound because it is not a valid label value', () => {
    assert.equal(parseError('x>-1'), `unable to parse requirement: values[0][x]: Invalid value: "-1": ${VALUE_MSG}`);
  });
});

describe('matchesLabels', () => {
  const labels = { app: 'web', tier: 'front', n: '10' };

  it('matches everything with an empty selector, even without labels', () => {
    assert.equal(matches('', undefined), true);
    assert.equal(matches('', labels), true);
  });

  it('matches = and == only when the key is present with that value', () => {
    assert.equal(matches('app=web', labels), true);
    assert.equal(matches('app==web', labels), true);
    assert.equal(matches('app=db', labels), false);
    assert.equal(matches('missing=', labels), false);
    assert.equal(matches('app=web', undefined), false);
  });

  it('matches != and notin when the key is absent', () => {
    assert.equal(matches('missing!=x', labels), true);
    assert.equal(matches('missing notin (x)', labels), true);
    assert.equal(matches('app!=web', undefined), true);
    assert.equal(matches('app!=db', labels), true);
    assert.equal(matches('app!=web', labels), false);
    assert.equal(matches('app notin (db,web)', labels), false);
  });

  it('matches in only when the key is present with a listed value', () => {
    assert.equal(matches('app in (db,web)', labels), true);
    assert.equal(matches('app in (db)', labels), false);
    assert.equal(matches('missing in (x)', labels), false);
  });

  it('matches the empty value only for a key that is present and empty', () => {
    assert.equal(matches('e in ()', { e: '' }), true);
    assert.equal(matches('e in ()', {}), false);
    assert.equal(matches('e=', { e: '' }), true);
  });

  it('matches exists and does-not-exist on presence alone', () => {
    assert.equal(matches('app', labels), true);
    assert.equal(matches('missing', labels), false);
    assert.equal(matches('!missing', labels), true);
    assert.equal(matches('!app', labels), false);
    assert.equal(matches('!app', undefined), true);
  });

  it('compares > and < as 64-bit integers', () => {
    assert.equal(matches('n>9', labels), true);
    assert.equal(matches('n>10', labels), false);
    assert.equal(matches('n<11', labels), true);
    assert.equal(matches('n<10', labels), false);
    assert.equal(matches('n>9', { n: '0010' }), true);
    assert.equal(matches('n<1', { n: '9223372036854775807' }), false);
  });

  it('does not match > or < when the label is missing or not an integer', () => {
    assert.equal(matches('n>1', {}), false);
    assert.equal(matches('n<100', { n: 'ten' }), false);
    assert.equal(matches('n>1', { n: '9223372036854775808' }), false);
  });

  it('requires every requirement to hold', () => {
    assert.equal(matches('app=web,tier=front', labels), true);
    assert.equal(matches('app=web,tier=back', labels), false);
  });

  it('ignores inherited object properties', () => {
    assert.equal(matches('constructor', {}), false);
    assert.equal(matches('!toString', {}), true);
  });
});

describe('renderLabelSelector', () => {
  it('renders each operator in canonical form', () => {
    const s = 'a=1,b==2,c!=3,d in (y,x),e notin (z),f,!g,h>4,i<5';
    assert.equal(renderLabelSelector(parseLabelSelector(s)), 'a=1,b==2,c!=3,d in (x,y),e notin (z),f,!g,h>4,i<5');
  });

  it('renders the empty selector as an empty string', () => {
    assert.equal(renderLabelSelector({ requirements: [] }), '');
  });

  it('renders empty values as written by upstream', () => {
    assert.equal(renderLabelSelector(parseLabelSelector('x in (a,)')), 'x in (,a)');
    assert.equal(renderLabelSelector(parseLabelSelector('x notin ()')), 'x notin ()');
    assert.equal(renderLabelSelector(parseLabelSelector('x=')), 'x=');
  });

  it('gives the same string for selectors that differ only in order', () => {
    assert.equal(renderLabelSelector(parseLabelSelector('x=a,a=x')), renderLabelSelector(parseLabelSelector('a=x,x=a')));
  });

  it('sorts multiple values without mutating the selector', () => {
    const sel: LabelSelector = { requirements: [{ key: 'k', operator: 'In', values: ['b', 'a'] }] };
    assert.equal(renderLabelSelector(sel), 'k in (a,b)');
    assert.deepEqual(sel.requirements[0].values, ['b', 'a']);
  });

  it('round-trips through the parser', () => {
    for (const s of ['', 'a=b', 'x!=y,z in (a,b),!w', 'k notin (,v)', 'in in (in)', 'n>5,n<9']) {
      const sel = parseLabelSelector(s);
      assert.deepEqual(parseLabelSelector(renderLabelSelector(sel)), sel, s);
    }
  });
});

describe('labelSelectorFromMetav1', () => {
  it('matches everything for null, undefined and {}', () => {
    for (const sel of [null, undefined, {}, { matchLabels: {}, matchExpressions: [] }, { matchLabels: null, matchExpressions: null }]) {
      const converted = labelSelectorFromMetav1(sel);
      assert.deepEqual(converted, { requirements: [] });
      assert.equal(matchesLabels(converted, { any: 'thing' }), true);
    }
  });

  it('turns matchLabels into = requirements sorted by key', () => {
    assert.deepEqual(labelSelectorFromMetav1({ matchLabels: { b: '1', a: '2' } }).requirements, [
      { key: 'a', operator: 'Equals', values: ['2'] },
      { key: 'b', operator: 'Equals', values: ['1'] },
    ]);
  });

  it('converts every matchExpressions operator, keeping values as given', () => {
    const sel = labelSelectorFromMetav1({
      matchExpressions: [
        { key: 'd', operator: 'DoesNotExist' },
        { key: 'c', operator: 'Exists', values: [] },
        { key: 'b', operator: 'NotIn', values: ['y', 'x'] },
        { key: 'a', operator: 'In', values: ['2', '1'] },
      ],
    });
    assert.deepEqual(sel.requirements, [
      { key: 'a', operator: 'In', values: ['2', '1'] },
      { key: 'b', operator: 'NotIn', values: ['y', 'x'] },
      { key: 'c', operator: 'Exists', values: [] },
      { key: 'd', operator: 'DoesNotExist', values: [] },
    ]);
    assert.equal(renderLabelSelector(sel), 'a in (1,2),b notin (x,y),c,!d');
  });

  it('matches with upstream semantics, e.g. NotIn on a namespace without the label', () => {
    const sel = labelSelectorFromMetav1({
      matchLabels: { team: 'a' },
      matchExpressions: [{ key: 'skip', operator: 'NotIn', values: ['yes'] }],
    });
    assert.equal(matchesLabels(sel, { team: 'a' }), true);
    assert.equal(matchesLabels(sel, { team: 'a', skip: 'yes' }), false);
    assert.equal(matchesLabels(sel, { team: 'b' }), false);
  });

  it('does not mutate its input', () => {
    const input = { matchLabels: { b: '1', a: '2' }, matchExpressions: [{ key: 'z', operator: 'In', values: ['2', '1'] }] };
    const copy = structuredClone(input);
    const sel = labelSelectorFromMetav1(input);
    sel.requirements[2].values.push('3');
    assert.deepEqual(input, copy);
  });

  it('rejects an unknown operator', () => {
    assert.equal(metav1Error({ matchExpressions: [{ key: 'a', operator: 'Foo' }] }), '"Foo" is not a valid label selector operator');
    assert.equal(metav1Error({ matchExpressions: [{ key: 'a', operator: 'in', values: ['x'] }] }), '"in" is not a valid label selector operator');
  });

  it('rejects In and NotIn without values, showing the nil slice as null', () => {
    assert.equal(
      metav1Error({ matchExpressions: [{ key: 'a', operator: 'In', values: [] }] }),
      "values: Invalid value: null: for 'in', 'notin' operators, values set can't be empty",
    );
    assert.equal(
      metav1Error({ matchExpressions: [{ key: 'a', operator: 'NotIn' }] }),
      "values: Invalid value: null: for 'in', 'notin' operators, values set can't be empty",
    );
  });

  it('rejects Exists with values', () => {
    assert.equal(
      metav1Error({ matchExpressions: [{ key: 'a', operator: 'Exists', values: ['x'] }] }),
      'values: Invalid value: ["x"]: values set must be empty for exists and does not exist',
    );
  });

  it('reports key and value errors together at key and values[i][key]', () => {
    assert.equal(
      metav1Error({ matchLabels: { 'a/b/c': '-x' } }),
      `[key: Invalid value: "a/b/c": ${MULTI_SLASH_MSG}, values[0][a/b/c]: Invalid value: "-x": ${VALUE_MSG}]`,
    );
  });

  it('indexes expression values in the given order without de-duplicating', () => {
    assert.equal(
      metav1Error({ matchExpressions: [{ key: 'k', operator: 'In', values: ['-b', 'ok', '-b'] }] }),
      `[values[0][k]: Invalid value: "-b": ${VALUE_MSG}, values[2][k]: Invalid value: "-b": ${VALUE_MSG}]`,
    );
  });

  it('reports the first bad matchLabels key in sorted order', () => {
    assert.equal(metav1Error({ matchLabels: { 'z/': 'v', '-a': 'v' } }), `key: Invalid value: "-a": ${KEY_NAME_MSG}`);
  });
});
