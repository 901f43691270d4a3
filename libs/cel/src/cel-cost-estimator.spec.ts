import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { estimateCelCost, type SizeBound } from './cel-cost-estimator.js';
import { compileCel } from './cel-environment.js';

const cost = (expr: string, self: SizeBound) => estimateCelCost(compileCel(expr, { self: 'dyn' }).ast, { self });
const strings = (items: number, length: number): SizeBound => ({ kind: 'list', max: items, elem: { kind: 'string', max: length } });

describe('estimateCelCost', () => {
  it('multiplies a comprehension body by the size of its range, so nesting multiplies', () => {
    const once = cost('self.all(x, x.size() < 3)', strings(100, 10));
    const nested = cost('self.all(x, self.all(y, x.size() < y.size()))', strings(100, 10));
    assert.ok(once >= 100 && once < 1_000, String(once));
    assert.ok(nested >= 100 * 100, String(nested));
  });

  it('charges string traversals and regexes by the bounded length', () => {
    const short = cost("self.matches('^[a-z]+$')", { kind: 'string', max: 63 });
    const long = cost("self.matches('^[a-z]+$')", { kind: 'string', max: 63_000 });
    assert.ok(long > short * 500, `${short} ${long}`);
  });

  it('keeps simple comparisons of fields cheap, and saturates instead of overflowing', () => {
    assert.ok(cost('self.a <= self.b', { kind: 'map', max: 2, fields: new Map() }) < 10);
    assert.equal(cost('self.all(a, self.all(b, self.all(c, self.all(d, a == d))))', strings(1e6, 1e6)), Number.MAX_SAFE_INTEGER);
  });
});
