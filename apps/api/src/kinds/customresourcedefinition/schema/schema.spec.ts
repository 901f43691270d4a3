import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fieldErrorMessage } from '@plinth/apimachinery';
import type { StructuralSchema } from '@plinth/apimachinery';
import { evaluateJsonPath, parseJsonPath } from '../../../table/jsonpath.js';
import { compileRules, validateRules } from './cel-rules.js';
import { escapeCelName } from './cel-schema-values.js';
import { applyDefaults, pruneNonNullableNulls } from './defaulting.js';
import { validateListSetsAndMaps } from './list-type.validation.js';
import { validateStructural } from './structural.validation.js';
import { validateSchemaValue } from './value-validation.js';

const msgs = (errs: ReturnType<typeof validateSchemaValue>) => errs.map(fieldErrorMessage);

describe('CRD schema machinery', () => {
  const schema: StructuralSchema = {
    type: 'object',
    properties: {
      spec: {
        type: 'object',
        required: ['a'],
        properties: {
          a: { type: 'integer', minimum: 1, exclusiveMaximum: true, maximum: 5 },
          b: { type: 'string', format: 'date-time' },
          c: { type: 'array', maxItems: 1, items: { type: 'string' } },
          d: { type: 'object', maxProperties: 1, additionalProperties: { type: 'boolean' } },
          e: { 'x-kubernetes-int-or-string': true },
          f: { type: 'string', nullable: true, default: 'x' },
        },
      },
    },
  };

  it('maps value errors to upstream field errors', () => {
    assert.deepEqual(msgs(validateSchemaValue({ spec: { a: 5, b: 'yesterday', c: ['x', 'y'], d: { p: 1, q: true }, e: 1.5 } }, schema)), [
      'spec.a: Invalid value: 5: spec.a in body should be less than 5',
      'spec.b: Invalid value: "yesterday": spec.b in body must be of type date-time: "yesterday"',
      'spec.c: Too many: 2: must have at most 1 items',
      'spec.d: Too many: 2: must have at most 1 items',
      'spec.d.p: Invalid value: "integer": spec.d.p in body must be of type boolean: "integer"',
      'spec.e: Invalid value: "number": spec.e in body must be of type integer,string: "number"',
    ]);
    assert.deepEqual(msgs(validateSchemaValue({ spec: {} }, schema)), ['spec.a: Required value']);
  });

  it('defaults absent and null fields, and prunes nulls that cannot be defaulted', () => {
    const obj = { spec: { a: 1, f: null, b: null } } as Record<string, unknown>;
    pruneNonNullableNulls(obj, schema);
    applyDefaults(obj, schema);
    assert.deepEqual(obj, { spec: { a: 1, f: null } });
    const fresh = { spec: { a: 1 } };
    applyDefaults(fresh, schema);
    assert.deepEqual(fresh, { spec: { a: 1, f: 'x' } });
  });

  it('checks list-type set and map uniqueness', () => {
    const s: StructuralSchema = {
      type: 'object',
      properties: { m: { type: 'array', 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['k'], items: { type: 'object', properties: { k: { type: 'string' } } } } },
    };
    assert.deepEqual(msgs(validateListSetsAndMaps({ m: [{ k: 'a' }, { k: 'b' }, { k: 'a', v: 1 }] }, s)), ['m[2]: Duplicate value: {"k":"a"}']);
  });

  it('finds non-structural schemas', () => {
    const errs = validateStructural({ type: 'object', properties: { x: {}, y: { type: 'array' } } } as StructuralSchema, 'p');
    assert.deepEqual(errs.map(fieldErrorMessage), ['p.properties[x].type: Required value: must not be empty for specified object fields', 'p.properties[y].items: Required value: must be specified']);
  });

  it('evaluates rules with upstream paths and escaping', () => {
    const s: StructuralSchema = {
      type: 'object',
      'x-kubernetes-validations': [{ rule: 'self.spec.__namespace__ != "x"', message: 'root rule' }],
      properties: {
        spec: { type: 'object', properties: { namespace: { type: 'string' }, items: { type: 'array', items: { type: 'integer', 'x-kubernetes-validations': [{ rule: 'self < 10', reason: 'FieldValueForbidden', message: 'small' }] } } } },
      },
    };
    const errs = validateRules(compileRules(s), { spec: { namespace: 'x', items: [1, 20] } }).map(fieldErrorMessage);
    assert.deepEqual(errs, ['<nil>: Invalid value: "object": root rule', 'spec.items[1]: Forbidden: small']);
    assert.equal(escapeCelName('a-b.c/d__e'), 'a__dash__b__dot__c__slash__d__underscores__e');
  });

  it('evaluates rules over properties and map keys named constructor and __proto__ (found probing the server)', () => {
    const s: StructuralSchema = {
      type: 'object',
      properties: {
        spec: {
          type: 'object',
          'x-kubernetes-validations': [{ rule: 'self.constructor > 0 && self.__underscores__proto__underscores__ == "p" && self.m["__proto__"] == "q" && self.m.constructor == "c"', message: 'spec rule' }],
          properties: { constructor: { type: 'integer' as const }, ['__proto__']: { type: 'string' }, m: { type: 'object', additionalProperties: { type: 'string' } } },
        },
      },
    };
    const spec = (n: number) => JSON.parse(`{"spec":{"constructor":${n},"__proto__":"p","m":{"__proto__":"q","constructor":"c"}}}`);
    assert.deepEqual(validateRules(compileRules(s), spec(5)).map(fieldErrorMessage), []);
    assert.deepEqual(validateRules(compileRules(s), spec(0)).map(fieldErrorMessage), ['spec: Invalid value: "object": spec rule']);
  });

  it('evaluates printer-column JSONPath filters', () => {
    const obj = { status: { conditions: [{ type: 'Ready', status: 'True' }, { type: 'Synced', status: 'False' }] }, l: [1, 2, 3] };
    assert.deepEqual(evaluateJsonPath(parseJsonPath('.status.conditions[?(@.type=="Synced")].status'), obj), ['False']);
    assert.deepEqual(evaluateJsonPath(parseJsonPath('{.l[-1]}'), obj), [3]);
    assert.deepEqual(evaluateJsonPath(parseJsonPath('.l[0:2]'), obj), [1, 2]);
    assert.deepEqual(evaluateJsonPath(parseJsonPath('.status.conditions[*].type'), obj), ['Ready', 'Synced']);
  });
});
