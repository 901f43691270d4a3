import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Quantity } from './quantity.js';
import { compileRe2, re2LinearEngineEnabled, Re2SyntaxError, re2Test } from './re2-regex.js';

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

  it('cannot be made to backtrack catastrophically', () => {
    assert.ok(re2LinearEngineEnabled(), 'V8 linear engine available');
    const t0 = Date.now();
    assert.equal(re2Test('^(a+)+$', `${'a'.repeat(50000)}b`), false);
    assert.ok(Date.now() - t0 < 1000);
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
