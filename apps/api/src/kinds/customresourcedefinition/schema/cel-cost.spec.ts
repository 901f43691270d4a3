import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MAX_UINT64, multiplySaturating } from '@plinth/cel';
import type { StructuralSchema } from '@plinth/apimachinery';
import { CelCostTotal, childCardinality } from './cel-cost.js';
import { validateOpenApiSchema } from './openapi-schema.validation.js';

// Upstream's CRD-level cost cases: apiextensions-apiserver pkg/apis/apiextensions/validation/validation_test.go
// (TestCostInfo, TestPerCRDEstimatedCost, and the cost cases of TestValidateCustomResourceDefinitionValidation).

const ROOT = 'spec.validation.openAPIV3Schema';
const TOTAL = /^x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds budget by factor of /;
const CONTRIBUTED = 'contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema';

type S = StructuralSchema;
const rules = (...r: Array<string | { rule: string; messageExpression: string }>) => ({ 'x-kubernetes-validations': r.map((x) => (typeof x === 'string' ? { rule: x } : x)) });
const root = (properties: Record<string, S>, extra: Partial<S> = {}): S => ({ type: 'object', properties, ...extra });
const errorsOf = (s: S) => validateOpenApiSchema(s, ROOT).map((e) => ({ field: e.field, type: e.type, detail: e.detail ?? '' }));

/** The cardinality of a leaf under `chain`, as RootCELContext/childContext compute it (undefined: unbounded). */
function cardinalityUnder(chain: S[]): number | undefined {
  let c: number | undefined = 1;
  for (const s of chain) {
    const n = childCardinality(s);
    c = c === undefined || n === undefined ? undefined : multiplySaturating(c, n);
  }
  return c;
}

describe('CRD rule cost: cardinality (TestCostInfo)', () => {
  const obj: S = { type: 'object' };
  const arr = (maxItems?: number): S => ({ type: 'array', items: { type: 'string' }, maxItems });
  const map = (maxProperties?: number): S => ({ type: 'object', additionalProperties: { type: 'string' }, maxProperties });
  const cases: Array<[string, S[], number | undefined]> = [
    ['object', [obj], 1],
    ['array', [arr(5)], 5],
    ['unbounded array', [arr()], undefined],
    ['map', [map(10)], 10],
    ['unbounded map', [map()], undefined],
    ['array inside map', [map(5), arr(5)], 25],
    ['unbounded array inside bounded map', [map(5), arr()], undefined],
    ['object inside array', [arr(3), obj], 3],
    ['map inside object inside array', [arr(2), obj, map(4)], 8],
    // math.MaxInt items of 100 items each: more than a uint64 holds.
    ['integer overflow bounds check', [arr(2 ** 63 - 1), arr(100)], MAX_UINT64],
  ];
  for (const [name, chain, want] of cases) {
    it(`${name}: ${want ?? 'unbounded'}`, () => assert.equal(cardinalityUnder(chain), want));
  }
});

describe('CRD rule cost: the per-CRD total (TestPerCRDEstimatedCost)', () => {
  const cases: Array<[string, number[], number[], number]> = [
    ['no costs', [], [], 0],
    ['one cost', [1000000], [1000000], 1000000],
    ['one cost, ignored', [900000], [], 900000],
    ['2 costs', [5000000, 25000000], [25000000, 5000000], 30000000],
    ['3 costs, one ignored', [5000000, 25000000, 900000], [25000000, 5000000], 30900000],
    ['4 costs', [16000000, 50000000, 34000000, 50000000], [50000000, 50000000, 34000000, 16000000], 150000000],
    ['5 costs, one trimmed, one ignored', [16000000, 50000000, 900000, 34000000, 50000000, 50000001], [50000001, 50000000, 50000000, 34000000], 200900001],
    ['costs do not overflow', [MAX_UINT64 / 2, MAX_UINT64 / 2, 1, 10, 100, 1000], [MAX_UINT64 / 2, MAX_UINT64 / 2], MAX_UINT64],
  ];
  for (const [name, costs, expensive, total] of cases) {
    it(name, () => {
      const t = new CelCostTotal();
      for (const c of costs) t.observe('p', c);
      assert.deepEqual(
        t.mostExpensive.map((x) => x.cost),
        expensive,
      );
      assert.equal(t.total, total);
    });
  }
});

describe('CRD rule cost: schemas upstream accepts and refuses', () => {
  const nested = (key: S, outer: Partial<S> = {}, inner: Partial<S> = {}): S =>
    root({
      value: {
        type: 'array',
        ...outer,
        items: { type: 'object', ...inner, additionalProperties: { type: 'object', required: ['key'], properties: { key } } },
        ...rules('self.all(x, x.all(y, x[y].key == x[y].key))'),
      },
    });

  it('forbids rules whose total exceeds the CRD limit, naming each costly rule and the schema', () => {
    const item = (type: S['type']): S => ({ type, maxLength: 5000, ...rules("self.contains('keyword')") });
    const errs = errorsOf(
      root({
        list: { type: 'array', maxItems: 100000, items: item('string') },
        map: { type: 'object', maxProperties: 1000, additionalProperties: item('string') },
        field: { type: 'integer', ...rules('self > 50 && self < 100') },
      }),
    );
    const listRule = `${ROOT}.properties[list].items.x-kubernetes-validations[0].rule`;
    const mapRule = `${ROOT}.properties[map].additionalProperties.x-kubernetes-validations[0].rule`;
    assert.deepEqual(
      errs.map((e) => e.field).sort(),
      [ROOT, listRule, listRule, mapRule].sort(),
    );
    assert.ok(errs.every((e) => e.type === 'FieldValueForbidden'));
    assert.ok(errs.some((e) => e.field === listRule && /^estimated rule cost exceeds budget by factor of /.test(e.detail)));
    assert.ok(errs.some((e) => e.field === mapRule && e.detail === CONTRIBUTED));
    assert.ok(errs.some((e) => e.field === ROOT && TOTAL.test(e.detail)));
  });

  it('forbids a double-nested rule with no limit set, or with only the inner key bounded', () => {
    const rule = `${ROOT}.properties[value].x-kubernetes-validations[0].rule`;
    for (const s of [nested({ type: 'string' }), nested({ type: 'string', maxLength: 10 })]) {
      const errs = errorsOf(s);
      assert.deepEqual(errs.map((e) => e.field).sort(), [ROOT, rule, rule].sort());
      assert.ok(errs.some((e) => e.field === rule && /^estimated rule cost exceeds budget by factor of more than 100x/.test(e.detail)));
    }
  });

  it('holds the rules of a schema an update leaves unchanged to the CRD total only, not to the per-rule limit', () => {
    const rule = `${ROOT}.properties[value].x-kubernetes-validations[0].rule`;
    const errs = validateOpenApiSchema(nested({ type: 'string' }), ROOT, true, { suppressPerExpressionCost: true }).map((e) => `${e.field} ${e.detail}`);
    assert.deepEqual(errs.map((e) => e.split(' ')[0]).sort(), [ROOT, rule].sort());
    assert.ok(errs.some((e) => e === `${rule} ${CONTRIBUTED}`));
    // A rule within the total passes untouched.
    const oneRule = root({ f: { type: 'array', items: { type: 'string' }, ...rules({ rule: 'true', messageExpression: 'self[0] + self[1] + self[2] + self[3] + self[4] + self[5] + self[6] + self[7]' }) } });
    assert.deepEqual(validateOpenApiSchema(oneRule, ROOT, true, { suppressPerExpressionCost: true }), []);
  });

  it('allows the double-nested rule with three limits set, or one on the outermost array of numbers', () => {
    assert.deepEqual(errorsOf(nested({ type: 'string', maxLength: 10 }, { maxItems: 10 }, { maxProperties: 10 })), []);
    assert.deepEqual(errorsOf(nested({ type: 'number' }, { maxItems: 4 })), []);
  });

  it('checks a messageExpression against the per-expression limit without multiplying it', () => {
    const eight = { rule: 'true', messageExpression: 'self[0] + self[1] + self[2] + self[3] + self[4] + self[5] + self[6] + self[7]' };
    const errs = errorsOf(root({ f: { type: 'array', items: { type: 'string' }, ...rules(eight) } }));
    assert.deepEqual(
      errs.map((e) => e.field),
      [`${ROOT}.properties[f].x-kubernetes-validations[0].messageExpression`],
    );
    assert.match(errs[0].detail, /^estimated messageExpression cost exceeds budget by factor of /);
  });

  it('counts a messageExpression in the CRD total', () => {
    const three = { rule: 'true', messageExpression: 'string(self[0]) + string(self[1]) + string(self[2])' };
    const msg = `${ROOT}.properties[f].x-kubernetes-validations[0].messageExpression`;
    const errs = errorsOf(root({ f: { type: 'array', items: { type: 'string' }, ...rules(three) } }));
    assert.deepEqual(errs.map((e) => e.field).sort(), [ROOT, msg, msg].sort());
  });

  it('accepts lowerAscii in a bounded nested loop, and metadata.name bounded at a resource root', () => {
    assert.deepEqual(errorsOf(root({ f: { type: 'array', maxItems: 5, items: { type: 'string', maxLength: 5 }, ...rules('self.all(x, self.exists_one(y, x.lowerAscii() == y.lowerAscii()))') } })), []);
    assert.deepEqual(errorsOf({ type: 'object', ...rules('self.metadata.name.contains(self.metadata.name) && self.metadata.generateName.contains(self.metadata.generateName)') }), []);
  });

  it("accepts prometheus-operator's sigv4 rule under two unbounded lists (one copy per 3 bytes of a request)", () => {
    const sigv4: S = { type: 'object', properties: { externalId: { type: 'string' }, roleArn: { type: 'string' } }, ...rules('!has(self.externalId) || has(self.roleArn)') };
    const schema = root({ spec: { type: 'object', properties: { receivers: { type: 'array', items: { type: 'object', properties: { snsConfigs: { type: 'array', items: { type: 'object', properties: { sigv4 } } } } } } } } });
    assert.deepEqual(errorsOf(schema), []);
  });

  it('refuses matches() on an unbounded string under an unbounded list, and accepts it where it runs once', () => {
    const item: S = { type: 'object', properties: { s: { type: 'string' } }, ...rules('self.s.matches("^(a+)+$")') };
    const errs = errorsOf(root({ spec: { type: 'object', properties: { l: { type: 'array', items: item } } } }));
    const rule = `${ROOT}.properties[spec].properties[l].items.x-kubernetes-validations[0].rule`;
    assert.ok(errs.some((e) => e.field === rule && /^estimated rule cost exceeds budget by factor of more than 100x \(try simplifying the rule/.test(e.detail)), JSON.stringify(errs));
    // 629,148 units: the string's 3 MiB traversed at 0.1 per character, times a quarter of the pattern's length.
    assert.deepEqual(errorsOf(root({ spec: item })), []);
  });
});
