import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { declaredSize, estimateCelCost } from './cel-cost-estimator.js';
import type { DeclType } from './cel-cost-size.js';
import { compileCel } from './cel-environment.js';

// Figures derived by hand from cel-go's rules (checker/cost.go): identifiers and selections 1, constants 0,
// a list literal 10, a comprehension its range's size times (loop condition + step), `==` a tenth of the
// shorter side's size, has() free (Kubernetes' PresenceTestHasCost(false)).

const str = (maxElements: number): DeclType => ({ kind: 'string', maxElements, minSerializedSize: 2 });
const obj = (fields: Record<string, DeclType>): DeclType => ({ kind: 'object', maxElements: 0, minSerializedSize: 2, fields: new Map(Object.entries(fields)) });
const list = (elem: DeclType, maxElements: number): DeclType => ({ kind: 'list', maxElements, minSerializedSize: 2, elem });
const INT: DeclType = { kind: 'int', maxElements: 0, minSerializedSize: 1 };
const SELF = obj({ s: str(40), n: INT, l: list(str(40), 10) });
const cost = (expr: string, self: DeclType = SELF) => estimateCelCost(compileCel(expr, { self: 'dyn', oldSelf: 'dyn' }).ast, self);

describe('estimateCelCost', () => {
  it('charges nothing for a presence test but the identifier', () => {
    assert.equal(cost('has(self.s)'), 1);
    assert.equal(cost('!has(self.s) || has(self.n)'), 3);
  });

  it('multiplies a comprehension step by the size of its range: exists over 10 strings of 40 bytes', () => {
    // self.l 2; per item: condition !@result 3, step @result || (x == 'a') 1 + 1 + 1; result 1.
    assert.equal(cost("self.l.exists(x, x == 'a')"), 2 + 10 * 6 + 1);
  });

  it('nests: a loop in a loop costs the product of both ranges', () => {
    const once = cost('self.l.all(x, true)');
    const nested = cost('self.l.all(x, self.l.all(y, true))');
    assert.equal(once, 2 + 10 * 3 + 1);
    assert.equal(nested, 2 + 10 * (3 + once) + 1);
  });

  it('charges cel.bind the empty list it expands to, once', () => {
    // [] 10, self.s 2, then v.size() > 0: v 1, size 1, comparison 1.
    assert.equal(cost('cel.bind(v, self.s, v.size() > 0)'), 10 + 2 + 3);
  });

  it('charges `in` a list by its size, and matches() by the string length times a quarter of the pattern', () => {
    assert.equal(cost("'a' in self.l"), 10 + 2);
    // (40 + 1) × 0.1 → 5, times ceil(7 × 0.25) = 2, plus self.s.
    assert.equal(cost('self.s.matches("^(a+)+$")'), 5 * 2 + 2);
  });

  it('gives a string built from an unsized conversion no bound, so its comparison is priced as unbounded', () => {
    assert.ok(cost("'n=' + string(self.n) == 'n=1'") > 1e17);
  });

  it('finds declared sizes by path: fields, @items and @values, @keys', () => {
    const self = obj({ m: { kind: 'map', maxElements: 7, minSerializedSize: 2, key: str(0), elem: list(str(12), 3) } });
    assert.deepEqual(declaredSize(self, ['self', 'm']), { min: 0, max: 7 });
    assert.deepEqual(declaredSize(self, ['self', 'm', '@values']), { min: 0, max: 3 });
    assert.deepEqual(declaredSize(self, ['self', 'm', '@values', '@items']), { min: 0, max: 12 });
    assert.deepEqual(declaredSize(self, ['self', 'm', '@keys']), { min: 0, max: 0 });
    assert.equal(declaredSize(self, ['self', 'nope']), undefined);
    assert.equal(declaredSize(self, []), undefined);
  });
});
