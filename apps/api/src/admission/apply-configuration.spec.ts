import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { StructuralSchema } from '@plinth/apimachinery';
import { mergeApplyConfiguration } from './apply-configuration.js';

const schema: StructuralSchema = {
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      properties: {
        ports: { type: 'array', 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['name'], items: { type: 'object', properties: { name: { type: 'string' }, port: { type: 'integer' }, proto: { type: 'string' } } } },
        tags: { type: 'array', 'x-kubernetes-list-type': 'set', items: { type: 'string' } },
        args: { type: 'array', items: { type: 'string' } },
        selector: { type: 'object', 'x-kubernetes-map-type': 'atomic', additionalProperties: { type: 'string' } },
        labels: { type: 'object', additionalProperties: { type: 'string' } },
      },
    },
  },
};

describe('mergeApplyConfiguration', () => {
  it('merges maps, keyed lists and sets; replaces atomic lists and maps; does not mutate its inputs', () => {
    const object = {
      spec: { ports: [{ name: 'http', port: 80, proto: 'TCP' }], tags: ['a'], args: ['x', 'y'], selector: { a: '1', b: '2' }, labels: { keep: 'me' } },
    };
    const before = structuredClone(object);
    const out = mergeApplyConfiguration(schema, object, {
      spec: { ports: [{ name: 'http', port: 8080 }, { name: 'https', port: 443 }], tags: ['b', 'a'], args: ['z'], selector: { c: '3' }, labels: { add: 'ed' } },
    });
    assert.deepEqual(out, {
      spec: {
        ports: [{ name: 'http', port: 8080, proto: 'TCP' }, { name: 'https', port: 443 }],
        tags: ['a', 'b'],
        args: ['z'],
        selector: { c: '3' },
        labels: { keep: 'me', add: 'ed' },
      },
    });
    assert.deepEqual(object, before);
  });

  it('leaves fields set to null unchanged', () => {
    assert.deepEqual(mergeApplyConfiguration(schema, { spec: { args: ['x'] } }, { spec: { args: null } }), { spec: { args: ['x'] } });
  });
});
