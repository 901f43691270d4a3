import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { StructuralSchema } from '@plinth/apimachinery';
import { describeSchemaGates, schemaGates, validateSchemaGates } from './schema-feature-gates.js';

const schema: StructuralSchema = {
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      properties: {
        width: { type: 'integer', description: 'width.', 'x-plinth-feature-gate': 'Frobber2D' },
        items: { type: 'array', items: { type: 'object', properties: { depth: { type: 'integer', 'x-plinth-feature-gate': 'Deep' } } } },
        labels: { type: 'object', additionalProperties: { type: 'string', enum: ['a', 'b'], 'x-plinth-feature-gated-values': { b: 'Bee' } } },
      },
    },
  },
};

describe('CRD schema feature gates', () => {
  it('collects gated fields and values with data paths through lists and maps', () => {
    assert.deepEqual(schemaGates(schema), {
      fields: [
        { path: 'spec.width', gate: 'Frobber2D' },
        { path: 'spec.items.*.depth', gate: 'Deep' },
      ],
      values: [{ path: 'spec.labels.*', value: 'b', gate: 'Bee' }],
    });
  });

  it('refuses unknown gates, values outside the enum and a gated root, at schema paths', () => {
    const bad: StructuralSchema = { ...structuredClone(schema), 'x-plinth-feature-gate': 'Frobber2D' };
    bad.properties!.spec.properties!.labels.additionalProperties = { type: 'string', enum: ['a'], 'x-plinth-feature-gated-values': { c: 'Bee' } };
    const errs = validateSchemaGates(bad, 'root', (g) => g !== 'Deep');
    assert.deepEqual(errs.map((e) => `${e.type} ${e.field}`), [
      'FieldValueForbidden root.x-plinth-feature-gate',
      'FieldValueInvalid root.properties[spec].properties[items].items.properties[depth].x-plinth-feature-gate',
      'FieldValueInvalid root.properties[spec].properties[labels].additionalProperties.x-plinth-feature-gated-values[c]',
    ]);
    assert.deepEqual(validateSchemaGates(schema, 'root', () => true), []);
  });

  it('adds upstream\'s sentence to gated descriptions without changing the input', () => {
    const described = describeSchemaGates(schema, (g) => (g === 'Frobber2D' ? 'ALPHA' : g === 'Bee' ? 'BETA' : undefined));
    assert.equal(described.properties!.spec.properties!.width.description, 'width. This field is alpha-level and is only honored by servers that enable the Frobber2D feature.');
    assert.equal(described.properties!.spec.properties!.items.items!.properties!.depth.description, undefined);
    assert.equal(
      (described.properties!.spec.properties!.labels.additionalProperties as StructuralSchema).description,
      'The value "b" is beta-level and is only honored by servers that enable the Bee feature.',
    );
    assert.equal(schema.properties!.spec.properties!.width.description, 'width.');
  });
});
