import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { StructuralSchema } from '../schema/structural-schema.js';
import { pruneUnknownFields } from './prune.js';

const str: StructuralSchema = { type: 'string' };
const objectMeta: StructuralSchema = {
  type: 'object',
  properties: { name: str, namespace: str, finalizers: { type: 'array', items: str }, labels: { type: 'object', additionalProperties: str } },
};

/** The CRD schema of the field_validation e2e tests. */
const crdSchema: StructuralSchema = {
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      properties: {
        foo: str,
        cronSpec: str,
        ports: {
          type: 'array',
          'x-kubernetes-list-type': 'map',
          'x-kubernetes-list-map-keys': ['containerPort', 'protocol'],
          items: { type: 'object', properties: { containerPort: { type: 'integer' }, hostIP: str, name: str, protocol: str } },
        },
      },
    },
  },
};

describe('pruneUnknownFields', () => {
  it('keeps a valid object unchanged and reports nothing', () => {
    const obj = { apiVersion: 'g/v1', kind: 'K', metadata: { name: 'a' }, spec: { foo: 'x', ports: [{ containerPort: 80, protocol: 'TCP' }] } };
    const r = pruneUnknownFields(obj, crdSchema);
    assert.deepEqual(r, { pruned: obj, removed: [] });
  });

  it('removes an undeclared root field and reports it with a leading dot', () => {
    const obj = { apiVersion: 'g/v1', kind: 'K', metadata: { name: 'a' }, unknownField: 'unknown', spec: { foo: 'x' } };
    const r = pruneUnknownFields(obj, crdSchema);
    assert.deepEqual(r.removed, ['.unknownField']);
    assert.deepEqual(r.pruned, { apiVersion: 'g/v1', kind: 'K', metadata: { name: 'a' }, spec: { foo: 'x' } });
  });

  it('removes nested and array-item fields and reports them sorted', () => {
    const obj = { spec: { zeta: 1, ports: [{ containerPort: 80, bogus: 1 }, { name: 'b', extra: { x: 1 } }], alpha: 2 } };
    const r = pruneUnknownFields(obj, crdSchema);
    assert.deepEqual(r.removed, ['.spec.alpha', '.spec.ports[0].bogus', '.spec.ports[1].extra', '.spec.zeta']);
    assert.deepEqual(r.pruned, { spec: { ports: [{ containerPort: 80 }, { name: 'b' }] } });
  });

  it('always keeps root apiVersion, kind and metadata, whatever the schema says', () => {
    const obj = { apiVersion: 'g/v1', kind: 'K', metadata: { name: 'a', anything: { x: 1 } } };
    assert.deepEqual(pruneUnknownFields(obj, { type: 'object', properties: {} }), { pruned: obj, removed: [] });
  });

  it('keeps a preserve-unknown-fields subtree but prunes inside its declared properties', () => {
    const schema: StructuralSchema = {
      type: 'object',
      properties: {
        spec: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true, properties: { strict: { type: 'object', properties: { a: str } } } },
      },
    };
    const obj = { spec: { free: { x: [1, { y: 2 }] }, strict: { a: 'x', b: 'y' } } };
    const r = pruneUnknownFields(obj, schema);
    assert.deepEqual(r.removed, ['.spec.strict.b']);
    assert.deepEqual(r.pruned, { spec: { free: { x: [1, { y: 2 }] }, strict: { a: 'x' } } });
  });

  it('keeps everything at a root with preserve-unknown-fields', () => {
    const obj = { spec: { a: 1 }, status: { b: 2 } };
    assert.deepEqual(pruneUnknownFields(obj, { type: 'object', 'x-kubernetes-preserve-unknown-fields': true }), { pruned: obj, removed: [] });
  });

  it('keeps map entries allowed by additionalProperties and prunes inside their values', () => {
    const schema: StructuralSchema = {
      type: 'object',
      properties: { m: { type: 'object', additionalProperties: { type: 'object', properties: { v: str } } }, any: { type: 'object', additionalProperties: true } },
    };
    const obj = { m: { a: { v: 'x' }, b: { v: 'y', w: 'z' } }, any: { q: { r: 1 } } };
    const r = pruneUnknownFields(obj, schema);
    assert.deepEqual(r.removed, ['.m.b.w']);
    assert.deepEqual(r.pruned, { m: { a: { v: 'x' }, b: { v: 'y' } }, any: { q: { r: 1 } } });
  });

  it('keeps apiVersion, kind and metadata of an embedded resource and prunes the rest', () => {
    const schema: StructuralSchema = {
      type: 'object',
      properties: {
        spec: {
          type: 'object',
          properties: {
            template: { type: 'object', 'x-kubernetes-embedded-resource': true, properties: { metadata: { type: 'object', properties: { name: str } }, spec: { type: 'object' } } },
          },
        },
      },
    };
    const obj = { spec: { template: { apiversion: 'foo/v1', apiVersion: 'v1', kind: 'Sub', metadata: { name: 's', namespace: 'n' }, spec: { x: 1 } } } };
    const r = pruneUnknownFields(obj, schema);
    assert.deepEqual(r.removed, ['.spec.template.apiversion', '.spec.template.spec.x']);
    assert.deepEqual(r.pruned, { spec: { template: { apiVersion: 'v1', kind: 'Sub', metadata: { name: 's', namespace: 'n' }, spec: {} } } });
  });

  it('prunes root and embedded metadata against options.objectMeta, root metadata reported first', () => {
    const schema: StructuralSchema = {
      type: 'object',
      properties: {
        spec: {
          type: 'object',
          'x-kubernetes-preserve-unknown-fields': true,
          properties: { template: { type: 'object', 'x-kubernetes-embedded-resource': true, properties: { metadata: { type: 'object', properties: { name: str } } } } },
        },
        zz: str,
      },
    };
    const obj = {
      metadata: { name: 'mytest', unknownMeta: 'unknown', finalizers: ['f'] },
      spec: { template: { metadata: { unknownSubMeta: 'unknown', name: 'sub', namespace: 'ns' } } },
      aa: 1,
    };
    const r = pruneUnknownFields(obj, schema, { objectMeta });
    assert.deepEqual(r.removed, ['.metadata.unknownMeta', '.aa', '.spec.template.metadata.unknownSubMeta']);
    assert.deepEqual(r.pruned, {
      metadata: { name: 'mytest', finalizers: ['f'] },
      spec: { template: { metadata: { name: 'sub', namespace: 'ns' } } },
    });
  });

  it('removes every key of an object under a schema that declares none, as upstream does', () => {
    const schema: StructuralSchema = { type: 'object', properties: { s: str, e: { type: 'object' } } };
    const r = pruneUnknownFields({ s: { a: 1 }, e: { b: 2 } }, schema);
    assert.deepEqual(r.removed, ['.e.b', '.s.a']);
    assert.deepEqual(r.pruned, { s: {}, e: {} });
  });

  it('prunes items of an array whose schema has no items', () => {
    const schema: StructuralSchema = { type: 'object', properties: { list: { type: 'array' } } };
    const r = pruneUnknownFields({ list: [1, { a: 1 }, [{ b: 2 }]] }, schema);
    assert.deepEqual(r.removed, ['.list[1].a', '.list[2][0].b']);
    assert.deepEqual(r.pruned, { list: [1, {}, [{}]] });
  });

  it('does not mutate the input and shares no containers with it', () => {
    const obj = { apiVersion: 'g/v1', metadata: { labels: { a: 'b' } }, spec: { foo: 'x', bar: { y: 1 } } };
    const before = structuredClone(obj);
    const r = pruneUnknownFields(obj, crdSchema);
    assert.deepEqual(obj, before);
    const pruned = r.pruned as typeof obj;
    assert.notEqual(pruned.metadata, obj.metadata);
    assert.notEqual(pruned.metadata.labels, obj.metadata.labels);
    assert.notEqual(pruned.spec, obj.spec);
  });

  it('keeps __proto__ as an own key and does not read inherited members as schema', () => {
    const obj = JSON.parse('{"spec":{"foo":"x","constructor":1},"metadata":{"__proto__":{"polluted":true}}}');
    const r = pruneUnknownFields(obj, crdSchema);
    assert.deepEqual(r.removed, ['.spec.constructor']);
    const meta = (r.pruned as { metadata: object }).metadata;
    assert.deepEqual(Object.keys(meta), ['__proto__']);
    assert.equal(Object.getPrototypeOf(meta), Object.prototype);
  });

  it('returns scalars as they are', () => {
    assert.deepEqual(pruneUnknownFields('x', crdSchema), { pruned: 'x', removed: [] });
    assert.deepEqual(pruneUnknownFields(null, crdSchema), { pruned: null, removed: [] });
  });
});
