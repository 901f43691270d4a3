import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { StructuralSchema } from '../schema/structural-schema.js';
import { applyStrategicMergePatch } from './strategic-merge-patch.js';
import { PatchError, REJECTED_PATCH_MESSAGE } from './patch-error.js';

const str: StructuralSchema = { type: 'string' };
const stringMap: StructuralSchema = { type: 'object', additionalProperties: str };

/** A cut-down Pod/Deployment-like schema carrying the patch metadata upstream's Go struct tags declare. */
const schema: StructuralSchema = {
  type: 'object',
  properties: {
    apiVersion: str,
    kind: str,
    metadata: {
      type: 'object',
      properties: {
        name: str,
        labels: stringMap,
        annotations: stringMap,
        finalizers: { type: 'array', items: str, 'x-kubernetes-patch-strategy': 'merge' },
        ownerReferences: {
          type: 'array',
          'x-kubernetes-patch-strategy': 'merge',
          'x-kubernetes-patch-merge-key': 'uid',
          items: { type: 'object', properties: { uid: str, name: str, kind: str } },
        },
      },
    },
    data: stringMap,
    spec: {
      type: 'object',
      properties: {
        containers: {
          type: 'array',
          'x-kubernetes-patch-strategy': 'merge',
          'x-kubernetes-patch-merge-key': 'name',
          items: {
            type: 'object',
            properties: {
              name: str,
              image: str,
              args: { type: 'array', items: str },
              ports: {
                type: 'array',
                'x-kubernetes-patch-strategy': 'merge',
                'x-kubernetes-patch-merge-key': 'containerPort',
                items: { type: 'object', properties: { containerPort: { type: 'integer' }, protocol: str } },
              },
            },
          },
        },
        volumes: {
          type: 'array',
          'x-kubernetes-patch-strategy': 'merge,retainKeys',
          'x-kubernetes-patch-merge-key': 'name',
          items: { type: 'object', properties: { name: str, emptyDir: { type: 'object' }, hostPath: { type: 'object' } } },
        },
        strategy: {
          type: 'object',
          'x-kubernetes-patch-strategy': 'retainKeys',
          properties: { type: str, rollingUpdate: { type: 'object', properties: { maxSurge: str } } },
        },
        selector: { type: 'object', 'x-kubernetes-patch-strategy': 'replace', additionalProperties: str },
        ports: { type: 'array', items: { type: 'integer' }, 'x-kubernetes-patch-strategy': 'merge' },
        tolerations: { type: 'array', items: { type: 'object', properties: { key: str } } },
        matrix: { type: 'array', items: { type: 'array', items: str }, 'x-kubernetes-patch-strategy': 'merge' },
        broken: { type: 'array', items: str, 'x-kubernetes-patch-strategy': 'merge,replace' },
        blob: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
      },
    },
  },
};

function smp(doc: unknown, patch: unknown): Record<string, any> {
  return applyStrategicMergePatch(doc, patch, schema) as Record<string, any>;
}

function patchErrorOf(fn: () => unknown): PatchError {
  try {
    fn();
  } catch (e) {
    assert.ok(e instanceof PatchError, `expected a PatchError, got ${String(e)}`);
    return e;
  }
  assert.fail('expected a PatchError to be thrown');
}

function names(list: Array<{ name: string }>): string[] {
  return list.map((c) => c.name);
}

describe('applyStrategicMergePatch on maps', () => {
  it('applies the patch kubectl apply sends for an edited ConfigMap', () => {
    const live = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'cm', annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{"old":1}', other: 'x' } },
      data: { k: 'v', old: 'o', serverSide: 's' },
    };
    const out = smp(live, {
      data: { k: 'v2', old: null },
      metadata: { annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{"data":{"k":"v2"}}' } },
    });
    assert.deepEqual(out, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: 'cm',
        annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{"data":{"k":"v2"}}', other: 'x' },
      },
      data: { k: 'v2', serverSide: 's' },
    });
  });

  it('ignores null for a member that does not exist instead of storing it', () => {
    const out = smp({ data: { a: '1' } }, { data: { b: null } });
    assert.deepEqual(out, { data: { a: '1' } });
  });

  it('drops nulls and directive-bearing maps inside a value new to the object', () => {
    const out = smp({}, { spec: { blob: { a: null, b: 1, gone: { $patch: 'delete' }, l: [{ $patch: 'replace' }, 2] } } });
    assert.deepEqual(out, { spec: { blob: { b: 1, l: [2] } } });
  });

  it('replaces a map with $patch: replace, without the directive', () => {
    const out = smp({ metadata: { labels: { a: '1', b: '2' } } }, { metadata: { labels: { $patch: 'replace', c: '3' } } });
    assert.deepEqual(out.metadata.labels, { c: '3' });
  });

  it('empties a map with $patch: delete', () => {
    const out = smp({ metadata: { name: 'x', labels: { a: '1' } } }, { metadata: { labels: { $patch: 'delete' } } });
    assert.deepEqual(out.metadata, { name: 'x', labels: {} });
  });

  it('replaces a map field whose strategy is replace', () => {
    const out = smp({ spec: { selector: { a: '1', b: '2' } } }, { spec: { selector: { c: '3' } } });
    assert.deepEqual(out.spec.selector, { c: '3' });
  });

  it('replaces a value whose JSON type changes', () => {
    const out = smp({ spec: { blob: 'text' } }, { spec: { blob: { a: 1 } } });
    assert.deepEqual(out.spec.blob, { a: 1 });
  });

  it('merges maps recursively where no schema is known', () => {
    const out = smp({ spec: { blob: { a: { x: 1, y: [1, 2] }, keep: true } } }, { spec: { blob: { a: { x: null, y: [3] } } } });
    assert.deepEqual(out.spec.blob, { a: { y: [3] }, keep: true });
  });

  it('behaves like a JSON merge patch without any schema', () => {
    const out = applyStrategicMergePatch({ a: { b: 1, c: 2 }, l: [1, 2] }, { a: { b: null, d: 3 }, l: [3] });
    assert.deepEqual(out, { a: { c: 2, d: 3 }, l: [3] });
  });

  it('clears fields missing from $retainKeys and merges the rest', () => {
    const live = { spec: { strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%' } } } };
    const out = smp(live, { spec: { strategy: { $retainKeys: ['type'], type: 'Recreate' } } });
    assert.deepEqual(out.spec.strategy, { type: 'Recreate' });
  });

  it('keeps a __proto__ member as data without touching any prototype', () => {
    const out = smp({ spec: {} }, JSON.parse('{"spec": {"__proto__": {"polluted": true}}}'));
    assert.equal(Object.getPrototypeOf(out.spec), Object.prototype);
    assert.deepEqual(Object.keys(out.spec), ['__proto__']);
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
  });

  it('returns an equal copy for a null patch', () => {
    const live = { metadata: { name: 'x' } };
    const out = smp(live, null);
    assert.deepEqual(out, live);
    assert.notEqual(out, live);
  });

  it('mutates neither the document nor the patch, and shares nothing with them', () => {
    const live = { metadata: { finalizers: ['a'] }, spec: { containers: [{ name: 'c', image: 'i' }] } };
    const patch = { metadata: { finalizers: ['b'] }, spec: { containers: [{ name: 'd', image: 'j' }], blob: { x: [1] } } };
    const liveSnapshot = structuredClone(live);
    const patchSnapshot = structuredClone(patch);
    const out = smp(live, patch);
    out.spec.containers[1].image = 'mutated';
    out.spec.blob.x.push(2);
    assert.deepEqual(live, liveSnapshot);
    assert.deepEqual(patch, patchSnapshot);
  });
});

describe('applyStrategicMergePatch on lists', () => {
  it('replaces lists without a merge strategy', () => {
    const live = { spec: { containers: [{ name: 'c', args: ['a', 'b'] }], tolerations: [{ key: 'x' }, { key: 'y' }] } };
    const out = smp(live, { spec: { containers: [{ name: 'c', args: ['z'] }], tolerations: [{ key: 'q' }] } });
    assert.deepEqual(out.spec.containers[0].args, ['z']);
    assert.deepEqual(out.spec.tolerations, [{ key: 'q' }]);
  });

  it('merges containers by name and their ports by containerPort', () => {
    const live = {
      spec: {
        containers: [
          { name: 'app', image: 'app:1', ports: [{ containerPort: 80, protocol: 'TCP' }] },
          { name: 'sidecar', image: 'side:1' },
        ],
      },
    };
    const out = smp(live, {
      spec: { containers: [{ name: 'app', image: 'app:2', ports: [{ containerPort: 443 }, { containerPort: 80, protocol: 'UDP' }] }] },
    });
    assert.deepEqual(out.spec.containers, [
      { name: 'app', image: 'app:2', ports: [{ containerPort: 443 }, { containerPort: 80, protocol: 'UDP' }] },
      { name: 'sidecar', image: 'side:1' },
    ]);
  });

  it('appends new ownerReferences and merges existing ones by uid', () => {
    const live = { metadata: { ownerReferences: [{ uid: 'u1', name: 'a', kind: 'ReplicaSet' }] } };
    const out = smp(live, { metadata: { ownerReferences: [{ uid: 'u2', name: 'b', kind: 'Job' }, { uid: 'u1', name: 'a2' }] } });
    assert.deepEqual(out.metadata.ownerReferences, [
      { uid: 'u2', name: 'b', kind: 'Job' },
      { uid: 'u1', name: 'a2', kind: 'ReplicaSet' },
    ]);
  });

  it('unions finalizers, ordering patch items by the patch and live-only items by the live list', () => {
    const out = smp({ metadata: { finalizers: ['a', 'b', 'c'] } }, { metadata: { finalizers: ['d', 'b', 'a'] } });
    assert.deepEqual(out.metadata.finalizers, ['d', 'b', 'a', 'c']);
  });

  it('does not duplicate a finalizer that is already present', () => {
    const out = smp({ metadata: { finalizers: ['x', 'y'] } }, { metadata: { finalizers: ['y'] } });
    assert.deepEqual(out.metadata.finalizers, ['x', 'y']);
  });

  it('unions integer lists with a merge strategy, new items leading as upstream orders them', () => {
    const out = smp({ spec: { ports: [1, 2] } }, { spec: { ports: [3, 2] } });
    assert.deepEqual(out.spec.ports, [3, 1, 2]);
  });

  it('removes list elements marked $patch: delete by merge key, new elements leading', () => {
    const live = { spec: { containers: [{ name: 'a' }, { name: 'b' }, { name: 'c' }] } };
    const out = smp(live, { spec: { containers: [{ name: 'b', $patch: 'delete' }, { name: 'd' }] } });
    assert.deepEqual(names(out.spec.containers), ['d', 'a', 'c']);
  });

  it('replaces a merging list whose patch has a $patch: replace element', () => {
    const live = { spec: { containers: [{ name: 'a', image: '1' }, { name: 'b' }] } };
    const out = smp(live, { spec: { containers: [{ $patch: 'replace' }, { name: 'z', image: '2' }] } });
    assert.deepEqual(out.spec.containers, [{ name: 'z', image: '2' }]);
  });

  it('merges lists declared with merge,retainKeys as merge lists', () => {
    const live = { spec: { volumes: [{ name: 'v1', emptyDir: {} }] } };
    const out = smp(live, { spec: { volumes: [{ name: 'v2', hostPath: { path: '/x' } }] } });
    assert.deepEqual(out.spec.volumes, [{ name: 'v2', hostPath: { path: '/x' } }, { name: 'v1', emptyDir: {} }]);
  });

  it('applies $retainKeys inside a merged list element', () => {
    const live = { spec: { volumes: [{ name: 'v1', emptyDir: {} }] } };
    const out = smp(live, { spec: { volumes: [{ name: 'v1', $retainKeys: ['name', 'hostPath'], hostPath: { path: '/x' } }] } });
    assert.deepEqual(out.spec.volumes, [{ name: 'v1', hostPath: { path: '/x' } }]);
  });
});

describe('applyStrategicMergePatch parallel-list directives', () => {
  it('deletes finalizers listed in $deleteFromPrimitiveList', () => {
    const out = smp({ metadata: { finalizers: ['a', 'b', 'c'] } }, { metadata: { '$deleteFromPrimitiveList/finalizers': ['b', 'zz'] } });
    assert.deepEqual(out.metadata.finalizers, ['a', 'c']);
  });

  it('deletes from a list even without a merge strategy', () => {
    const out = smp({ spec: { containers: [{ name: 'c', args: ['x', 'y'] }] } }, {
      spec: { containers: [{ name: 'c', '$deleteFromPrimitiveList/args': ['x'] }] },
    });
    assert.deepEqual(out.spec.containers[0].args, ['y']);
  });

  it('does not create a list that a $deleteFromPrimitiveList names but the object lacks', () => {
    const out = smp({ metadata: { name: 'x' } }, { metadata: { '$deleteFromPrimitiveList/finalizers': ['a'] } });
    assert.deepEqual(out.metadata, { name: 'x' });
  });

  it('reorders, adds and deletes finalizers as kubectl apply sends them', () => {
    const out = smp({ metadata: { finalizers: ['a', 'b', 'c'] } }, {
      metadata: { '$setElementOrder/finalizers': ['c', 'a', 'd'], '$deleteFromPrimitiveList/finalizers': ['b'], finalizers: ['d'] },
    });
    assert.deepEqual(out.metadata.finalizers, ['c', 'a', 'd']);
  });

  it('keeps live-only finalizers next to their live neighbours under $setElementOrder', () => {
    const out = smp({ metadata: { finalizers: ['one', 'four', 'two'] } }, {
      metadata: { '$setElementOrder/finalizers': ['three', 'one', 'two'], finalizers: ['three'] },
    });
    assert.deepEqual(out.metadata.finalizers, ['three', 'one', 'four', 'two']);
  });

  it('orders containers by $setElementOrder and keeps server-only containers in place', () => {
    const live = {
      spec: {
        containers: [{ name: '1', other: 'a' }, { name: '2', image: '2' }, { name: '9' }, { name: '3', image: '3' }, { name: '4', image: '4' }],
      },
    };
    const out = smp(live, { spec: { '$setElementOrder/containers': [{ name: '2' }, { name: '1' }, { name: '4' }, { name: '3' }] } });
    assert.deepEqual(names(out.spec.containers), ['2', '1', '9', '4', '3']);
    assert.deepEqual(out.spec.containers[1], { name: '1', other: 'a' });
  });

  it('merges a patched container list and applies $setElementOrder to the result', () => {
    const live = { spec: { containers: [{ name: 'a', image: 'x' }, { name: 'b', image: 'y' }] } };
    const out = smp(live, {
      spec: {
        '$setElementOrder/containers': [{ name: 'c' }, { name: 'b' }, { name: 'a' }],
        containers: [{ name: 'c', image: 'z' }, { name: 'a', image: 'x2' }],
      },
    });
    assert.deepEqual(out.spec.containers, [
      { name: 'c', image: 'z' },
      { name: 'b', image: 'y' },
      { name: 'a', image: 'x2' },
    ]);
  });

  it('adds a list that only the patch has, dropping its directive elements', () => {
    const out = smp({ spec: {} }, {
      spec: { '$setElementOrder/containers': [{ name: 'x' }], containers: [{ name: 'x' }, { name: 'y', $patch: 'delete' }] },
    });
    assert.deepEqual(out.spec.containers, [{ name: 'x' }]);
  });

  it('orders server-only items by the live list as edited in place by deletions and appends', () => {
    const live = { spec: { containers: [{ name: '1', other: 'a' }, { name: '4', other: 'c' }] } };
    const out = smp(live, {
      spec: {
        '$setElementOrder/containers': [{ name: '2' }, { name: '3' }],
        containers: [{ name: '2' }, { name: '3' }, { name: '1', $patch: 'delete' }],
      },
    });
    assert.deepEqual(out.spec.containers, [{ name: '4', other: 'c' }, { name: '2' }, { name: '3' }]);
  });

  it('places a server-only item after an added one when the deletion freed its slot', () => {
    const live = { spec: { containers: [{ name: '1' }, { name: '2', other: 'b' }, { name: '4', other: 'c' }] } };
    const out = smp(live, {
      spec: { '$setElementOrder/containers': [{ name: '2' }, { name: '3' }], containers: [{ name: '3' }, { name: '1', $patch: 'delete' }] },
    });
    assert.deepEqual(names(out.spec.containers), ['2', '4', '3']);
  });
});

describe('applyStrategicMergePatch errors', () => {
  it('answers 400 for a body that is not an object', () => {
    const err = patchErrorOf(() => smp({}, [{ op: 'add' }]));
    assert.equal(err.code, 400);
    assert.equal(err.reason, 'BadRequest');
    assert.equal(err.message, 'json: cannot unmarshal array into Go value of type map[string]interface {}');
  });

  it('answers 400 BadRequest (upstream: 500 without a reason) for an unknown $patch value', () => {
    const err = patchErrorOf(() => smp({ metadata: { labels: {} } }, { metadata: { labels: { $patch: 'bogus' } } }));
    assert.equal(err.code, 400);
    assert.equal(err.reason, 'BadRequest');
    assert.equal(err.message, 'unknown patch type: bogus in map: map[$patch:bogus]');
  });

  it('rejects $patch: merge in a map as an unknown patch type, as upstream does', () => {
    const err = patchErrorOf(() => smp({ metadata: { labels: {} } }, { metadata: { labels: { $patch: 'merge', a: '1' } } }));
    assert.equal(err.code, 400);
    assert.equal(err.message, 'unknown patch type: merge in map: map[$patch:merge a:1]');
  });

  it('rejects $patch: merge in a merging list', () => {
    const err = patchErrorOf(() => smp({ spec: { containers: [{ name: 'a' }] } }, { spec: { containers: [{ $patch: 'merge' }] } }));
    assert.equal(err.code, 400);
    assert.equal(err.message, 'merging lists cannot yet be specified in the patch');
  });

  it('answers 400 when a merging-list element lacks its merge key', () => {
    const err = patchErrorOf(() => smp({ spec: { containers: [{ name: 'a' }] } }, { spec: { containers: [{ image: 'nginx', ports: [{ containerPort: 80 }] }] } }));
    assert.equal(err.code, 400);
    assert.equal(err.message, 'map: map[image:nginx ports:[map[containerPort:80]]] does not contain declared merge key: name');
  });

  it('answers 400 when a delete directive lacks the merge key', () => {
    const err = patchErrorOf(() => smp({ metadata: { ownerReferences: [{ uid: 'u' }] } }, { metadata: { ownerReferences: [{ $patch: 'delete', name: 'x' }] } }));
    assert.equal(err.message, 'map: map[$patch:delete name:x] does not contain declared merge key: uid');
  });

  it('answers 400 for a patch key outside $retainKeys or a $retainKeys that is not a list', () => {
    const live = { spec: { strategy: { type: 'RollingUpdate' } } };
    const outside = patchErrorOf(() => smp(live, { spec: { strategy: { $retainKeys: ['type'], rollingUpdate: {} } } }));
    assert.equal(outside.code, 400);
    assert.equal(outside.message, 'invalid patch format of retainKeys');
    const notList = patchErrorOf(() => smp(live, { spec: { strategy: { $retainKeys: 'type' } } }));
    assert.equal(notList.message, 'invalid patch format of retainKeys');
  });

  it('answers 400 for parallel-list directives without a field name', () => {
    const del = patchErrorOf(() => smp({ metadata: { finalizers: ['a'] } }, { metadata: { $deleteFromPrimitiveListfinalizers: ['a'] } }));
    assert.equal(del.code, 400);
    assert.equal(del.message, 'invalid patch format of primitive list');
    const order = patchErrorOf(() => smp({ metadata: { finalizers: ['a'] } }, { metadata: { $setElementOrder: ['a'] } }));
    assert.equal(order.code, 400);
    assert.equal(order.message, 'invalid patch format of setElementOrder list');
  });

  it('answers 400 when the patch list contradicts $setElementOrder', () => {
    const err = patchErrorOf(() =>
      smp({ spec: { containers: [{ name: '1' }, { name: '3' }, { name: '2' }] } }, {
        spec: { '$setElementOrder/containers': [{ name: '1' }, { name: '2' }, { name: '3' }], containers: [{ name: '3' }, { name: '1' }] },
      }),
    );
    assert.equal(err.code, 400);
    assert.equal(
      err.message,
      "The order in patch list:\n[map[name:3] map[name:1]]\n doesn't match $setElementOrder list:\n[map[name:1] map[name:2] map[name:3]]\n",
    );
  });

  it('answers 400 when $setElementOrder is not a list', () => {
    const err = patchErrorOf(() => smp({ metadata: { finalizers: ['a'] } }, { metadata: { '$setElementOrder/finalizers': 'a' } }));
    assert.equal(err.message, 'expected a []interface {}, but received a string');
  });

  it('answers the generic 422 for a merging list of lists', () => {
    const err = patchErrorOf(() => smp({ spec: { matrix: [['a']] } }, { spec: { matrix: [['b']] } }));
    assert.equal(err.code, 422);
    assert.equal(err.reason, 'Invalid');
    assert.equal(err.message, REJECTED_PATCH_MESSAGE);
    assert.equal(err.detail, 'lists of lists are not supported');
  });

  it('answers 400 for mixed element types in a merging list', () => {
    const err = patchErrorOf(() => smp({ spec: { ports: [1] } }, { spec: { ports: ['x'] } }));
    assert.equal(err.message, 'list element types are not identical: [[1] [x]]');
  });

  it('answers 400 for a strategy pair that is not retainKeys plus one other', () => {
    const err = patchErrorOf(() => smp({ spec: { broken: ['a'] } }, { spec: { broken: ['b'] } }));
    assert.equal(err.message, 'unexpected patch strategy: [merge replace]');
  });
});
