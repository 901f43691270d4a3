import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { StructuralSchema } from '../schema/structural-schema.js';
import { fieldRule, findUnknownFields } from './unknown-fields.js';

const str: StructuralSchema = { type: 'string' };
const objectMeta: StructuralSchema = {
  type: 'object',
  properties: {
    name: str,
    namespace: str,
    labels: { type: 'object', additionalProperties: str },
    annotations: { type: 'object', additionalProperties: str },
  },
};
const deploymentSchema: StructuralSchema = {
  type: 'object',
  properties: {
    apiVersion: str,
    kind: str,
    metadata: objectMeta,
    spec: {
      type: 'object',
      properties: {
        replicas: { type: 'integer' },
        selector: { type: 'object', properties: { matchLabels: { type: 'object', additionalProperties: str } } },
        template: {
          type: 'object',
          properties: {
            metadata: objectMeta,
            spec: {
              type: 'object',
              properties: {
                containers: { type: 'array', items: { type: 'object', properties: { name: str, image: str } } },
              },
            },
          },
        },
      },
    },
  },
};

describe('findUnknownFields', () => {
  it('returns [] for an object that only uses declared fields', () => {
    const obj = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'd', labels: { app: 'x' } },
      spec: { replicas: 1, template: { spec: { containers: [{ name: 'c', image: 'i' }] } } },
    };
    assert.deepEqual(findUnknownFields(obj, deploymentSchema), []);
  });

  it('reports unknown fields with typed-decoder paths in object-key order', () => {
    const obj = {
      unknownTop: 1,
      metadata: { name: 'd', unknownMeta: 'foo' },
      spec: { unknownField: 'foo', template: { spec: { containers: [{ name: 'c' }, { name: 'd', foo: 1 }] } } },
    };
    assert.deepEqual(findUnknownFields(obj, deploymentSchema), [
      'unknownTop',
      'metadata.unknownMeta',
      'spec.unknownField',
      'spec.template.spec.containers[1].foo',
    ]);
  });

  it('always knows apiVersion and kind at the root', () => {
    assert.deepEqual(findUnknownFields({ apiVersion: 'v1', kind: 'K', other: 1 }, { type: 'object', properties: {} }), ['other']);
  });

  it('does not descend into an unknown field', () => {
    assert.deepEqual(findUnknownFields({ spec: { extra: { deep: { deeper: 1 } } } }, deploymentSchema), ['spec.extra']);
  });

  it('accepts any key of an additionalProperties map and checks its values', () => {
    const schema: StructuralSchema = {
      type: 'object',
      properties: { ports: { type: 'object', additionalProperties: { type: 'object', properties: { port: { type: 'integer' } } } } },
    };
    assert.deepEqual(findUnknownFields({ ports: { http: { port: 80 }, https: { port: 443, bogus: true } } }, schema), ['ports.https.bogus']);
  });

  it('accepts anything under additionalProperties: true', () => {
    const schema: StructuralSchema = { type: 'object', properties: { extra: { type: 'object', additionalProperties: true } } };
    assert.deepEqual(findUnknownFields({ extra: { a: { b: 1 } } }, schema), []);
  });

  it('treats additionalProperties: false like no additionalProperties', () => {
    const schema: StructuralSchema = { type: 'object', properties: { m: { type: 'object', properties: { a: str }, additionalProperties: false } } };
    assert.deepEqual(findUnknownFields({ m: { a: 'x', b: 'y' } }, schema), ['m.b']);
  });

  it('does not report fields of a preserve-unknown-fields subtree but checks its declared properties', () => {
    const schema: StructuralSchema = {
      type: 'object',
      properties: {
        spec: {
          type: 'object',
          'x-kubernetes-preserve-unknown-fields': true,
          properties: { strict: { type: 'object', properties: { a: str } } },
        },
      },
    };
    const obj = { spec: { anything: { goes: [1, { x: 2 }] }, strict: { a: 'x', b: 'y' } } };
    assert.deepEqual(findUnknownFields(obj, schema), ['spec.strict.b']);
  });

  it('carries preserve-unknown-fields from an array to its items, as pruning does', () => {
    const schema: StructuralSchema = {
      type: 'object',
      properties: { list: { type: 'array', 'x-kubernetes-preserve-unknown-fields': true, items: { type: 'object', properties: { a: str } } } },
    };
    assert.deepEqual(findUnknownFields({ list: [{ a: 'x', b: 'y' }] }, schema), []);
  });

  it('knows apiVersion, kind and metadata of an embedded resource', () => {
    const schema: StructuralSchema = {
      type: 'object',
      properties: {
        spec: {
          type: 'object',
          properties: { template: { type: 'object', 'x-kubernetes-embedded-resource': true, properties: { spec: { type: 'object', properties: {} } } } },
        },
      },
    };
    const obj = { spec: { template: { apiVersion: 'v1', kind: 'Pod', metadata: { whatever: 1 }, spec: { x: 1 }, y: 2 } } };
    assert.deepEqual(findUnknownFields(obj, schema), ['spec.template.spec.x', 'spec.template.y']);
  });

  it('checks embedded and root metadata against options.objectMeta when given', () => {
    const schema: StructuralSchema = {
      type: 'object',
      properties: { spec: { type: 'object', properties: { template: { type: 'object', 'x-kubernetes-embedded-resource': true } } } },
    };
    const obj = { metadata: { name: 'a', rootBad: 1 }, spec: { template: { metadata: { namespace: 'n', subBad: 1 } } } };
    assert.deepEqual(findUnknownFields(obj, schema, { objectMeta }), ['metadata.rootBad', 'spec.template.metadata.subBad']);
  });

  it('reports every key of an object whose schema declares nothing', () => {
    const schema: StructuralSchema = { type: 'object', properties: { empty: { type: 'object' } } };
    assert.deepEqual(findUnknownFields({ empty: { a: 1, b: 2 } }, schema), ['empty.a', 'empty.b']);
  });

  it('skips objects and arrays where the schema expects another type', () => {
    const schema: StructuralSchema = {
      type: 'object',
      properties: { n: { type: 'integer' }, ios: { 'x-kubernetes-int-or-string': true }, obj: { type: 'object', properties: {} } },
    };
    assert.deepEqual(findUnknownFields({ n: { a: 1 }, ios: { b: 1 }, obj: [{ c: 1 }] }, schema), []);
  });

  it('does not mistake inherited object members for declared properties', () => {
    const schema: StructuralSchema = { type: 'object', properties: { a: str } };
    assert.deepEqual(findUnknownFields(JSON.parse('{"constructor":1,"toString":2,"__proto__":3}'), schema), ['constructor', 'toString', '__proto__']);
  });

  it('keeps dots and brackets inside keys as they are', () => {
    const schema: StructuralSchema = { type: 'object', properties: { spec: { type: 'object', properties: {} } } };
    assert.deepEqual(findUnknownFields({ spec: { 'a.b[0]': 1 } }, schema), ['spec.a.b[0]']);
  });

  it('does not mutate its inputs', () => {
    const obj = { spec: { unknownField: 1 } };
    const copy = structuredClone(obj);
    findUnknownFields(obj, deploymentSchema);
    assert.deepEqual(obj, copy);
  });
});

describe('fieldRule', () => {
  it('prefers a declared property over additionalProperties', () => {
    const schema: StructuralSchema = { type: 'object', properties: { a: str }, additionalProperties: { type: 'integer' } };
    assert.deepEqual(fieldRule(schema, 'a', false, false), { kind: 'schema', schema: str });
    assert.deepEqual(fieldRule(schema, 'b', false, false), { kind: 'schema', schema: { type: 'integer' } });
  });

  it('treats resource meta fields specially only in resources', () => {
    assert.equal(fieldRule({ type: 'object' }, 'kind', true, false).kind, 'keep');
    assert.equal(fieldRule({ type: 'object' }, 'metadata', true, false).kind, 'metadata');
    assert.equal(fieldRule({ type: 'object' }, 'kind', false, false).kind, 'unknown');
    assert.equal(fieldRule({ type: 'object' }, 'kind', false, true).kind, 'keep');
  });
});
