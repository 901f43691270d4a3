import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compileCel, estimateCelCost } from '@plinth/cel';
import type { StructuralSchema } from '@plinth/apimachinery';
import { schemaDeclType } from './cel-decl-type.js';

// Upstream's own cost figures: apiextensions-apiserver pkg/apiserver/schema/cel/compilation_test.go,
// TestCostEstimation. Each case is estimated twice, as upstream does: with no bound on the
// schema ("calc") and with maxItems/maxProperties/maxLength set to `setMax` ("set").

type Gen = (max?: number) => StructuralSchema;

const COST_LIMIT = 100_000_000;
const withRule = (s: StructuralSchema, rule: string): StructuralSchema => ({ ...s, 'x-kubernetes-validations': [{ rule }] });

function leaf(type: string): StructuralSchema {
  if (type === 'int-or-string') return { 'x-kubernetes-int-or-string': true };
  if (type === 'duration' || type === 'date' || type === 'date-time') return { type: 'string', format: type };
  return { type: type as StructuralSchema['type'] };
}

const array = (type: string, rule: string): Gen => (max) => withRule({ type: 'array', items: leaf(type), maxItems: max }, rule);
const arrayOfArrays = (type: string, rule: string): Gen => (max) => withRule({ type: 'array', items: { type: 'array', items: leaf(type) }, maxItems: max }, rule);
const requiredOptional = (): StructuralSchema => ({ type: 'object', required: ['required'], properties: { required: { type: 'string' }, optional: { type: 'string' } } });
const objectArray = (rule: string): Gen => (max) => withRule({ type: 'array', items: requiredOptional(), maxItems: max }, rule);
const mapArray = (type: string, rule: string): Gen => (max) => withRule({ type: 'array', items: { type: 'object', additionalProperties: leaf(type) }, maxItems: max }, rule);
const map = (type: string, rule: string): Gen => (max) => withRule({ type: 'object', additionalProperties: leaf(type), maxProperties: max }, rule);
const mapOf = (item: StructuralSchema, rule: string): Gen => (max) => withRule({ type: 'object', additionalProperties: item, maxProperties: max }, rule);
const string = (rule: string): Gen => (max) => withRule({ type: 'string', maxLength: max }, rule);
const enumString = (rule: string, ...values: string[]): Gen => (max) => withRule({ type: 'string', maxLength: max, enum: values }, rule);
const bytes = (rule: string): Gen => (max) => withRule({ type: 'string', format: 'byte', maxLength: max }, rule);
const nestedSpec = (rule: string): Gen => (max) => withRule({ type: 'object', additionalProperties: { type: 'string', maxLength: max }, maxProperties: max }, rule);
const allMaxNested = (rule: string): Gen => (max) =>
  withRule({ type: 'array', maxItems: max, items: { type: 'object', maxProperties: max, additionalProperties: { ...requiredOptional(), maxProperties: max } } }, rule);
const oneMaxNested = (rule: string): Gen => (max) => withRule({ type: 'array', items: { type: 'object', maxProperties: max, additionalProperties: requiredOptional() } }, rule);
const boundedString = (max?: number): StructuralSchema => ({ type: 'string', maxLength: max });

/** [name, schema, calc cost (or 'exceeds'), set bound, set cost] */
const CASES: Array<[string, Gen, number | 'exceeds', number, number]> = [
  ['number array with all', array('number', 'self.all(x, true)'), 4718591, 10, 32],
  ['string array with all', array('string', 'self.all(x, true)'), 3145727, 20, 62],
  ['boolean array with all', array('boolean', 'self.all(x, true)'), 1887437, 5, 17],
  ['array of number arrays with all', arrayOfArrays('number', 'self.all(x, true)'), 3145727, 100, 302],
  ['array of objects with all', objectArray('self.all(x, true)'), 555128, 50, 152],
  ['map of numbers with all', map('number', 'self.all(x, true)'), 1348169, 10, 32],
  ['map of strings with all', map('string', 'self.all(x, true)'), 1179647, 3, 11],
  ['map of booleans with all', map('boolean', 'self.all(x, true)'), 943718, 100, 302],
  ['string with contains', string("self.contains('test')"), 314574, 10, 5],
  ['string with startsWith', string("self.startsWith('test')"), 2, 15, 2],
  ['string with endsWith', string("self.endsWith('test')"), 2, 30, 2],
  ['concat string', string('size(self + "hello") > size("hello")'), 314578, 4, 7],
  ['index of array with numbers', array('number', 'self[1] == 0.0'), 2, 5000, 2],
  ['index of array with strings', array('string', 'self[1] == self[1]'), 314577, 8, 314577],
  ['O(n^2) loop with numbers', array('number', 'self.all(x, self.all(y, true))'), 'exceeds', 10, 352],
  ['O(n^3) loop with numbers', array('number', 'self.all(x, self.all(y, self.all(z, true)))'), 'exceeds', 10, 3552],
  ['regex matches simple', string('self.matches("x")'), 314574, 50, 22],
  ['regex matches empty string', string('"".matches("(((((((((())))))))))[0-9]")'), 7, 10, 7],
  ['regex matches empty regex', string('self.matches("")'), 1, 100, 1],
  ['map of strings with value length', nestedSpec('self.all(x, x.contains(self[x]))'), 2752507, 10, 72],
  ['set array maxLength to zero', array('number', 'self[3] == 0.0'), 2, 0, 2],
  ['set map maxLength to zero', map('number', 'self["x"] == 0.0'), 2, 0, 2],
  ['set string maxLength to zero', string('self == "x"'), 2, 0, 1],
  ['set bytes maxLength to zero', bytes('self == b"x"'), 2, 0, 1],
  ['set maxLength greater than estimated maxLength', array('number', 'self.all(x, x == 0.0)'), 6291454, 3 * 1024 * 2048, 25165826],
  ['nested types with root rule with all supporting maxLength', allMaxNested('self.all(x, x["y"].required == "z")'), 7340027, 10, 72],
  ['nested types with root rule with one supporting maxLength', oneMaxNested('self.all(x, x["y"].required == "z")'), 7340027, 10, 7340027],
  ['int-or-string array with all', array('int-or-string', 'self.all(x, true)'), 4718591, 10, 32],
  ['index of array with int-or-strings', array('int-or-string', 'self[0] == 5'), 3, 10, 3],
  ['index of array with booleans', array('boolean', 'self[0] == false'), 2, 25, 2],
  ['index of array of objects', objectArray('self[0] == null'), 2, 422, 2],
  ['index of array of array of numnbers', arrayOfArrays('number', 'self[0][0] == -1.0'), 3, 51, 3],
  ['array of number maps with all', mapArray('number', 'self.all(x, x.y == 25.2)'), 6291452, 12, 74],
  ['index of array of number maps', mapArray('number', 'self[0].x > 2.0'), 4, 3000, 4],
  ['duration array with all', array('duration', 'self.all(x, true)'), 2359295, 5, 17],
  ['index of duration array', array('duration', 'self[0].getHours() == 2'), 4, 525, 4],
  ['date array with all', array('date', 'self.all(x, true)'), 725936, 15, 47],
  ['index of date array', array('date', 'self[2].getDayOfMonth() == 13'), 4, 42, 4],
  ['date-time array with all', array('date-time', 'self.all(x, true)'), 428963, 25, 77],
  ['index of date-time array', array('date-time', 'self[2].getMinutes() == 45'), 4, 99, 4],
  ['map of int-or-strings with all', map('int-or-string', 'self.all(x, true)'), 1348169, 15, 47],
  ['map of objects with all', mapOf(requiredOptional(), 'self.all(x, true)'), 428963, 20, 62],
  ['map of number maps with all', mapOf({ type: 'object', additionalProperties: { type: 'number' } }, 'self.all(x, true)'), 1179647, 10, 32],
  ['map of number arrays with all', mapOf({ type: 'array', items: { type: 'number' } }, 'self.all(x, true)'), 1179647, 25, 77],
  ['map of durations with all', map('duration', 'self.all(x, true)'), 1048577, 5, 17],
  ['map of dates with all', map('date', 'self.all(x, true)'), 524288, 10, 32],
  ['map of date-times with all', map('date-time', 'self.all(x, true)'), 349526, 25, 77],
  ['extended library regex find', string("self.find('[0-9]+') == ''"), 629147, 10, 11],
  ['extended library join', (max) => withRule({ type: 'array', maxItems: max, items: boundedString(max) }, "self.join(' ') == 'aa bb'"), 329853068905, 10, 43],
  ['extended library isSorted', (max) => withRule({ type: 'array', maxItems: max, items: boundedString(max) }, 'self.isSorted() == true'), 329854432052, 10, 52],
  [
    'extended library replace',
    (max) => withRule({ type: 'object', properties: { str: boundedString(max), before: boundedString(2), after: boundedString(4) } }, "self.str.replace(self.before, self.after) == 'does not matter'"),
    629154,
    4,
    12,
  ],
  ['extended library split', (max) => withRule({ type: 'object', properties: { str: boundedString(max), separator: boundedString(max) } }, 'self.str.split(self.separator) == []'), 629160, 10, 22],
  ['extended library lowerAscii', (max) => withRule(boundedString(max), "self.lowerAscii() == 'lower!'"), 314575, 10, 6],
  ['check cost of size call', map('integer', 'oldSelf.size() == self.size()'), 5, 10, 5],
  ['check cost of timestamp comparison', map('date-time', 'self["a"] == self["b"]'), 8, 7, 8],
  ['check cost of duration comparison', map('duration', 'self["c"] == self["d"]'), 8, 42, 8],
  ['enums with maxLength equals to the longest possible value', enumString("self.contains('A')", 'A', 'B', 'C', 'LongValue'), 2, 1000, 401],
  ['IntOrString type with quantity rule', (max) => withRule({ 'x-kubernetes-int-or-string': true, maxLength: max }, 'isQuantity(self)'), 314574, 20, 9],
];

function cost(s: StructuralSchema): number {
  const decl = schemaDeclType(s, false);
  assert.ok(decl, 'the schema has a CEL type');
  const rule = s['x-kubernetes-validations']?.[0]?.rule ?? '';
  return estimateCelCost(compileCel(rule, { self: 'dyn', oldSelf: 'dyn' }).ast, decl);
}

describe("estimateCelCost: upstream's cost figures (TestCostEstimation)", () => {
  for (const [name, gen, calc, setMax, set] of CASES) {
    it(`${name}: ${calc === 'exceeds' ? `more than ${COST_LIMIT}` : calc} unbounded, ${set} with bounds of ${setMax}`, () => {
      const unbounded = cost(gen(undefined));
      if (calc === 'exceeds') assert.ok(unbounded >= COST_LIMIT, `${unbounded}`);
      else assert.equal(unbounded, calc);
      assert.equal(cost(gen(setMax)), set);
    });
  }

  // TestMetadataNameCostIsBounded: at a resource root, metadata.name holds at most 253 characters.
  for (const rule of ["self.metadata.name.contains('x')", "self.metadata.generateName.contains('x')"]) {
    it(`bounds ${rule} by the length of an object name`, () => {
      const decl = schemaDeclType({ type: 'object' }, true);
      assert.ok(decl);
      const c = estimateCelCost(compileCel(rule, { self: 'dyn', oldSelf: 'dyn' }).ast, decl);
      assert.ok(c > 0 && c <= 10_000, String(c));
    });
  }
});
