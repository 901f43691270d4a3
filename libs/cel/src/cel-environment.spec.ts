import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CelBudget, CelCompileError, CelCostLimitError, CelEvaluationError, compileCel, jsonToCel } from './index.js';

const VARS = { self: 'dyn', oldSelf: 'dyn' };
const run = (expr: string, self: unknown = {}, oldSelf: unknown = null) => compileCel(expr, VARS).evaluate({ self, oldSelf });

describe('shared CEL environment', () => {
  it('evaluates the standard macros and operators', () => {
    const self = { l: [1n, 2n, 3n], m: { a: 1n }, s: 'héllo' };
    assert.equal(run('self.l.all(x, x > 0) && self.l.exists(x, x == 2) && self.l.exists_one(x, x == 3)', self), true);
    assert.deepEqual(run('self.l.map(x, x * 2).filter(x, x > 2)', self), [4n, 6n]);
    assert.equal(run('size(self.s) == 5 && self.m.all(k, self.m[k] == 1)', self), true);
    assert.equal(run('has(self.m.a) && !has(self.m.b)', self), true);
    assert.equal(run('self.?missing.orValue(7)', self), 7n);
  });

  it('reads JSON keys named constructor and __proto__ as map keys like any other', () => {
    const self = jsonToCel(JSON.parse('{"constructor":5,"__proto__":"p","nested":{"constructor":{"a":1},"toString":"t"},"plain":{}}'));
    assert.equal(run('self.constructor > 0 && self.nested.constructor.a == 1 && self.nested.toString == "t"', self), true);
    assert.equal(run('self["__proto__"] == "p" && "__proto__" in self && has(self.constructor)', self), true);
    assert.equal(run('!has(self.plain.constructor) && !("toString" in self.plain) && size(self) == 4', self), true);
    assert.deepEqual(Object.keys(jsonToCel(JSON.parse('{"__proto__":{"polluted":true}}')) as object), ['__proto__']);
    assert.equal(({} as { polluted?: boolean }).polluted, undefined);
  });

  it('supports has() on any operand, as CRDs use it', () => {
    assert.equal(run('has(self.matches[0].path)', { matches: [{ path: '/' }] }), true);
    assert.equal(run('has(self.matches[0].path)', { matches: [{}] }), false);
  });

  it('uses RE2 syntax for matches(), find() and findAll()', () => {
    assert.equal(run('self.matches("^(?i)abc$")', 'ABC'), true);
    assert.equal(run('self.matches(r"""^[a-z]+\\z""")', 'abc'), true);
    assert.equal(run('"a1b22c333".find("[0-9]+")'), '1');
    assert.deepEqual(run('"a1b22c333".findAll("[0-9]+", 2)'), ['1', '22']);
    assert.equal(run('self.matches.size()', { matches: 'x' }), 1n, 'a field named matches is not a call');
  });

  it('has the Kubernetes strings, lists, sets, quantity, url, ip, cidr and format libraries', () => {
    assert.equal(run('"abc".charAt(1) + "a-b".replace("-", "+") + " x ".trim()'), 'ba+bx');
    assert.equal(run('"%s=%d".format([dyn("n"), dyn(3)])'), 'n=3');
    assert.equal(run('[3, 1, 2].max() == 3 && [1, 2].sum() == 3 && [1, 2, 3].isSorted() && [1, 2].indexOf(2) == 1'), true);
    assert.equal(run('sets.contains([1, 2, 3], [2]) && sets.intersects([1], [1, 5]) && sets.equivalent([1, 2], [2, 1])'), true);
    assert.equal(run('quantity("1Gi").isGreaterThan(quantity("1000Mi")) && quantity("500m").asApproximateFloat() == 0.5'), true);
    assert.equal(run('url("https://example.com:8443/a?b=c").getPort() == "8443" && url("https://example.com/a").getHostname() == "example.com"'), true);
    assert.equal(run('isIP("10.0.0.1") && ip("::1").isLoopback() && cidr("10.0.0.0/8").containsIP("10.2.3.4") && !isCIDR("10.0.0.0/33")'), true);
    assert.equal(run('format.dns1123Label().validate("Not_Valid").hasValue() && !format.named("dns1123Label").value().validate("ok").hasValue()'), true);
  });

  it('reports compile errors with a position', () => {
    assert.throws(() => compileCel('self.x +', VARS), (e: unknown) => e instanceof CelCompileError && /^ERROR: <input>:1:9: /.test(e.message));
    assert.throws(() => compileCel('[1, "a"]', VARS), CelCompileError);
  });

  it('accepts literals mixing dyn with other types, as cel-go does, and still refuses concrete mixes', () => {
    assert.deepEqual(run('{"a": self.x, "b": "y"}', { x: 1n }), { a: 1n, b: 'y' });
    assert.deepEqual(run('[1, self.x, "a"]', { x: 2n }), [1n, 2n, 'a']);
    assert.throws(() => compileCel('[1, "a", self.x]', VARS), CelCompileError);
  });

  it('reports runtime errors with cel-go wording', () => {
    assert.throws(() => run('self.nope == 1', {}), (e: unknown) => e instanceof CelEvaluationError && e.message === 'no such key: nope');
  });

  it('knows which variables an expression reads (transition rules)', () => {
    assert.equal(compileCel('self == oldSelf', VARS).uses('oldSelf'), true);
    assert.equal(compileCel('self.l.all(oldSelfx, oldSelfx > 0)', VARS).uses('oldSelf'), false);
  });

  it('bounds evaluation cost per call and per budget', () => {
    const l = Array.from({ length: 200 }, (_, i) => BigInt(i + 1));
    const heavy = compileCel('self.all(a, self.all(b, self.all(c, a + b + c > 0)))', VARS);
    const t0 = Date.now();
    assert.throws(() => heavy.evaluate({ self: l, oldSelf: null }), (e: unknown) => e instanceof CelCostLimitError && e.scope === 'call');
    assert.ok(Date.now() - t0 < 2000);
    const budget = new CelBudget(1000);
    const light = compileCel('self.all(a, a > 0)', VARS);
    assert.throws(() => light.evaluate({ self: l, oldSelf: null }, budget), (e: unknown) => e instanceof CelCostLimitError && e.scope === 'total');
    assert.ok(budget.remaining <= 0);
  });
});
