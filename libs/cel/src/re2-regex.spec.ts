import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Quantity } from '@plinth/apimachinery';
import { compileRe2, Re2SyntaxError, re2Test } from './re2-regex.js';

describe('RE2 regular expressions', () => {
  it('translates RE2-only syntax', () => {
    assert.equal(re2Test('^(?i)\\.?[a-z_][a-z_0-9]*$', 'Foo_1'), true);
    assert.equal(re2Test('^a(?i:bc)d$', 'aBCd'), true);
    assert.equal(re2Test('^a(?i:bc)d$', 'aBCD'), false);
    assert.equal(re2Test('\\Aabc\\z', 'abc'), true);
    assert.equal(re2Test('^[[:alpha:]]+$', 'abcXYZ'), true);
    assert.equal(re2Test('^(?P<name>x)+$', 'xx'), true);
    assert.equal(re2Test('^\\pL+$', 'héllo'), true);
    assert.equal(re2Test('^(?s)a.b$', 'a\nb'), true);
  });

  it('rejects what RE2 rejects', () => {
    assert.throws(() => compileRe2('(a)\\1'), Re2SyntaxError);
    assert.throws(() => compileRe2('a(?=b)'), Re2SyntaxError);
    assert.throws(() => compileRe2('[a-z'), Re2SyntaxError);
  });

  it('cannot be made to backtrack catastrophically: the patterns that froze the server answer at once', () => {
    // These took seconds (growing 1.6x per character) on a backtracking engine; RE2 is linear.
    assert.equal(re2Test('^(a+)+$', `${'a'.repeat(50000)}b`), false);
    assert.equal(re2Test('^(\\pL+)+$', `${'é'.repeat(5000)}1`), false);
    assert.equal(re2Test('^(\\pL+)+$', 'héllo'), true);
    assert.equal(re2Test('^([a-zA-Z0-9]{1,30}){1,30}$', `${'a'.repeat(900)}!`), false);
    assert.equal(re2Test('^(\\w+\\s?)*$', `${'word '.repeat(4000)}!`), false);
    assert.equal(re2Test('(x+x+)+y', 'x'.repeat(20000)), false);
  });

  it('finds leftmost matches and all matches as Go does', () => {
    assert.equal(compileRe2('[0-9]+').find('ab12c345'), '12');
    assert.equal(compileRe2('[0-9]+').find('abc'), undefined);
    assert.deepEqual(compileRe2('[0-9]+').findAll('a12b345c6', -1), ['12', '345', '6']);
    assert.deepEqual(compileRe2('[0-9]+').findAll('a12b345c6', 2), ['12', '345']);
    assert.deepEqual(compileRe2('[0-9]+').findAll('a12b345c6', 0), []);
  });

  it('uses no process-wide V8 flag', () => {
    assert.throws(() => new RegExp('a', 'l'));
  });
});

describe('Quantity', () => {
  it('parses and compares Kubernetes quantities exactly', () => {
    assert.equal(Quantity.parse('1Gi').compareTo(Quantity.parse('1024Mi')), 0);
    assert.equal(Quantity.parse('100m').compareTo(Quantity.parse('0.1')), 0);
    assert.equal(Quantity.parse('1e3').asInteger(), 1000n);
    assert.equal(Quantity.parse('1.5').isInteger(), false);
    assert.equal(Quantity.parse('2').add(Quantity.parse('500m')).asApproximateFloat(), 2.5);
    assert.throws(() => Quantity.parse('12 Gi'), /quantities must match the regular expression/);
  });
});
