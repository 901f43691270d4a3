import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApplyConflictError } from './apply-conflict.js';
import { applyConfiguration, type FieldManagerScope, type JsonObject, keepTimestampsWhenUnchanged, trackUpdate } from './field-manager.js';
import type { FieldSchema } from './field-schema.js';
import { TypedValueError } from './field-schema.js';
import { decodeFieldsV1, encodeFieldsV1 } from './fields-v1.js';
import { decodeManagedFields, encodeManagedFields, managerIdentifier } from './managed-fields.js';
import { managerFromUserAgent } from './user-agent.js';

// A cut-down typed schema: ObjectMeta's labels/annotations/finalizers, a data map, and a spec with a map list,
// a set, an atomic list, a granular string map and a nested struct.
const str: FieldSchema = { type: 'string' };
const metadata: FieldSchema = {
  type: 'object',
  properties: {
    name: str,
    namespace: str,
    uid: str,
    resourceVersion: str,
    creationTimestamp: str,
    labels: { type: 'object', additionalProperties: str },
    annotations: { type: 'object', additionalProperties: str },
    finalizers: { type: 'array', items: str, 'x-kubernetes-list-type': 'set' },
    managedFields: { type: 'array', items: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
  },
};
const schema: FieldSchema = {
  type: 'object',
  properties: {
    apiVersion: str,
    kind: str,
    metadata,
    data: { type: 'object', additionalProperties: str },
    spec: {
      type: 'object',
      properties: {
        replicas: { type: 'integer' },
        containers: {
          type: 'array',
          'x-kubernetes-list-type': 'map',
          'x-kubernetes-list-map-keys': ['name'],
          items: { type: 'object', properties: { name: str, image: str, ports: { type: 'array', 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['containerPort', 'protocol'], items: { type: 'object', properties: { containerPort: { type: 'integer' }, protocol: { type: 'string', default: 'TCP' } } } } } },
        },
        tags: { type: 'array', items: str, 'x-kubernetes-list-type': 'set' },
        args: { type: 'array', items: str },
        template: { type: 'object', properties: { image: str, pull: str } },
      },
    },
    status: { type: 'object', properties: { phase: str } },
  },
};

const T0 = '2026-01-01T00:00:00Z';
const T1 = '2026-01-01T00:01:00Z';

function scope(over: Partial<FieldManagerScope> = {}): FieldManagerScope {
  return {
    type: { schema },
    apiVersion: 'v1',
    subresource: '',
    resetFields: ['status'],
    emptyObject: { metadata: { creationTimestamp: null } },
    now: () => T0,
    ...over,
  };
}

const base = (extra: Record<string, unknown> = {}): JsonObject => ({ apiVersion: 'v1', kind: 'Thing', metadata: { name: 'x', namespace: 'ns' }, ...extra });

function apply(live: JsonObject | null, config: JsonObject, manager: string, force = false, s = scope()): JsonObject {
  return applyConfiguration(live, config, manager, force, s);
}

function conflictOf(fn: () => unknown): ApplyConflictError {
  try {
    fn();
  } catch (e) {
    assert.ok(e instanceof ApplyConflictError, `expected a conflict, got ${String(e)}`);
    return e;
  }
  assert.fail('expected a conflict');
}

function entries(obj: JsonObject): Array<Record<string, unknown>> {
  return (obj.metadata?.managedFields ?? []) as Array<Record<string, unknown>>;
}

function fieldsOf(obj: JsonObject, manager: string, operation = 'Apply'): unknown {
  return entries(obj).find((e) => e.manager === manager && e.operation === operation)?.fieldsV1;
}

describe('managedFields on updates (create, PUT, patch)', () => {
  it('a create owns what it set, with "." on maps it added, and strips identity metadata', () => {
    const obj = base({ data: { a: '1' } });
    obj.metadata!.labels = { app: 'web' };
    trackUpdate(null, obj, 'kubectl-create', scope());
    assert.deepEqual(entries(obj), [
      {
        manager: 'kubectl-create',
        operation: 'Update',
        apiVersion: 'v1',
        time: T0,
        fieldsType: 'FieldsV1',
        fieldsV1: { 'f:data': { '.': {}, 'f:a': {} }, 'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } } },
      },
    ]);
  });

  it('an update takes changed fields from other managers and drops removed ones from everyone', () => {
    const created = base({ data: { a: '1', b: '2' } });
    trackUpdate(null, created, 'creator', scope());
    const next = structuredClone(created);
    next.data = { a: 'changed' };
    trackUpdate(created, next, 'kubectl-edit', scope({ now: () => T1 }));
    // The creator still owns the map it added (a member without children encodes as {}).
    assert.deepEqual(fieldsOf(next, 'creator', 'Update'), { 'f:data': {} });
    assert.deepEqual(fieldsOf(next, 'kubectl-edit', 'Update'), { 'f:data': { 'f:a': {} } });
  });

  it('an update that changes nothing leaves managedFields alone', () => {
    const created = base({ data: { a: '1' } });
    trackUpdate(null, created, 'creator', scope());
    const next = structuredClone(created);
    trackUpdate(created, next, 'other', scope({ now: () => T1 }));
    assert.deepEqual(next.metadata!.managedFields, created.metadata!.managedFields);
  });

  it('managedFields sent on an update replace the stored ones; [] and [{}] reset them; invalid ones are ignored', () => {
    const created = base({ data: { a: '1' } });
    trackUpdate(null, created, 'creator', scope());
    const sent = structuredClone(created);
    sent.metadata!.managedFields = [{ manager: 'someone', operation: 'Apply', apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1: { 'f:data': { 'f:a': {} } } }];
    trackUpdate(created, sent, 'patcher', scope());
    assert.deepEqual(entries(sent).map((e) => e.manager), ['someone']);
    for (const reset of [[], [{}]]) {
      const r = structuredClone(created);
      r.metadata!.managedFields = reset;
      trackUpdate(created, r, 'patcher', scope());
      assert.equal(r.metadata!.managedFields, undefined);
    }
    const bad = structuredClone(created);
    bad.metadata!.managedFields = [{ manager: 'x', operation: 'Bogus', apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1: {} }];
    trackUpdate(created, bad, 'patcher', scope());
    assert.deepEqual(bad.metadata!.managedFields, created.metadata!.managedFields);
  });

  it('a /status write is recorded with its subresource and ignores spec; the main resource ignores status', () => {
    const created = base({ spec: { replicas: 1 } });
    trackUpdate(null, created, 'creator', scope());
    const st = structuredClone(created);
    st.status = { phase: 'Ready' };
    st.spec = { replicas: 5 };
    trackUpdate(created, st, 'controller', scope({ subresource: 'status', resetFields: ['spec'] }));
    assert.deepEqual(entries(st).find((e) => e.manager === 'controller'), {
      manager: 'controller',
      operation: 'Update',
      apiVersion: 'v1',
      time: T0,
      fieldsType: 'FieldsV1',
      fieldsV1: { 'f:status': { '.': {}, 'f:phase': {} } },
      subresource: 'status',
    });
    const main = structuredClone(created);
    main.status = { phase: 'x' };
    trackUpdate(created, main, 'user', scope());
    assert.equal(fieldsOf(main, 'user', 'Update'), undefined);
  });

  it('keeps at most 10 Update managers, merging the oldest into ancient-changes', () => {
    let obj = base({ data: {} });
    for (let i = 0; i < 12; i++) {
      const next = structuredClone(obj);
      next.data = { ...(next.data as object), [`k${i}`]: 'v' };
      trackUpdate(obj, next, `m${i}`, scope({ now: () => `2026-01-01T00:00:${String(i).padStart(2, '0')}Z` }));
      obj = next;
    }
    const names = entries(obj).map((e) => e.manager);
    assert.equal(names.length, 10);
    assert.equal(names[0], 'ancient-changes');
    assert.deepEqual(fieldsOf(obj, 'ancient-changes', 'Update'), { 'f:data': { 'f:k0': {}, 'f:k1': {}, 'f:k2': {} } });
  });

  it('a write that only moves managedFields timestamps is made a no-op', () => {
    const old = base({ data: { a: '1' } });
    old.metadata!.managedFields = [{ manager: 'm', operation: 'Apply', apiVersion: 'v1', time: T0, fieldsType: 'FieldsV1', fieldsV1: { 'f:data': { 'f:a': {} } } }];
    const next = structuredClone(old);
    (next.metadata!.managedFields as Array<Record<string, unknown>>)[0].time = T1;
    keepTimestampsWhenUnchanged(next, old);
    assert.deepEqual(next, old);
  });
});

describe('server-side apply', () => {
  it('creates with one Apply entry owning every applied field', () => {
    const out = apply(null, base({ data: { a: '1' }, spec: { containers: [{ name: 'c', image: 'i', ports: [{ containerPort: 80 }] }] } }), 'mgr');
    assert.deepEqual(entries(out), [
      {
        manager: 'mgr',
        operation: 'Apply',
        apiVersion: 'v1',
        time: T0,
        fieldsType: 'FieldsV1',
        fieldsV1: {
          'f:data': { 'f:a': {} },
          'f:spec': {
            'f:containers': {
              'k:{"name":"c"}': { '.': {}, 'f:image': {}, 'f:name': {}, 'f:ports': { 'k:{"containerPort":80,"protocol":"TCP"}': { '.': {}, 'f:containerPort': {} } } },
            },
          },
        },
      },
    ]);
    assert.equal(out.metadata!.name, 'x');
  });

  it('conflicts with another applier changing its field; force takes it over and the loser entry disappears', () => {
    const a = apply(null, base({ data: { k: '1' } }), 'a');
    const err = conflictOf(() => apply(a, base({ data: { k: '2' } }), 'b'));
    assert.equal(err.message, 'Apply failed with 1 conflict: conflict with "a": .data.k');
    assert.deepEqual(err.causes, [{ type: 'FieldManagerConflict', message: 'conflict with "a"', field: '.data.k' }]);
    const forced = apply(a, base({ data: { k: '2' } }), 'b', true);
    assert.equal((forced.data as Record<string, string>).k, '2');
    assert.deepEqual(entries(forced).map((e) => e.manager), ['b']);
  });

  it('applying the same value as another manager shares ownership without conflict', () => {
    const a = apply(null, base({ data: { k: '1', only: 'a' } }), 'a');
    const b = apply(a, base({ data: { k: '1' } }), 'b');
    assert.deepEqual(fieldsOf(b, 'a'), { 'f:data': { 'f:k': {}, 'f:only': {} } });
    assert.deepEqual(fieldsOf(b, 'b'), { 'f:data': { 'f:k': {} } });
    // a stops applying k: b still owns it, so it stays; a stops applying `only`: nobody owns it, so it goes.
    const a2 = apply(b, base({ data: {} }), 'a');
    assert.deepEqual(a2.data, { k: '1' });
  });

  it('conflicts name updaters with their apiVersion and list several conflicts by manager', () => {
    const created = base({ data: { a: '1', b: '1' }, spec: { replicas: 1 } });
    trackUpdate(null, created, 'kubectl-edit', scope());
    const withApply = apply(created, base({ spec: { replicas: 1, tags: ['t'] } }), 'other');
    const err = conflictOf(() => apply(withApply, base({ data: { a: '2', b: '2' }, spec: { replicas: 3 } }), 'me'));
    assert.equal(
      err.message,
      'Apply failed with 4 conflicts: conflicts with "kubectl-edit" using v1:\n- .data.a\n- .data.b\n- .spec.replicas\nconflicts with "other":\n- .spec.replicas',
    );
    assert.equal(err.causes[0].message, 'conflict with "kubectl-edit" using v1');
  });

  it('merges map lists by key and sets by value from several appliers; atomic lists conflict', () => {
    const a = apply(null, base({ spec: { containers: [{ name: 'x', image: '1' }], tags: ['a'], args: ['1'] } }), 'a');
    const b = apply(a, base({ spec: { containers: [{ name: 'y', image: '2' }], tags: ['b'] } }), 'b');
    assert.deepEqual(b.spec, { containers: [{ name: 'x', image: '1' }, { name: 'y', image: '2' }], tags: ['a', 'b'], args: ['1'] });
    assert.deepEqual(fieldsOf(b, 'b'), { 'f:spec': { 'f:containers': { 'k:{"name":"y"}': { '.': {}, 'f:image': {}, 'f:name': {} } }, 'f:tags': { 'v:"b"': {} } } });
    const err = conflictOf(() => apply(b, base({ spec: { args: ['2'] } }), 'b'));
    assert.equal(err.message, 'Apply failed with 1 conflict: conflict with "a": .spec.args');
    const err2 = conflictOf(() => apply(b, base({ spec: { containers: [{ name: 'x', image: '9' }] } }), 'b'));
    assert.equal(err2.causes[0].field, '.spec.containers[name="x"].image');
  });

  it('keeps live-only items in place and orders shared items as applied', () => {
    const live = base({ spec: { containers: [{ name: 'a' }, { name: 'mine' }, { name: 'b' }] } });
    const out = apply(live, base({ spec: { containers: [{ name: 'b' }, { name: 'new' }, { name: 'a' }] } }), 'm');
    assert.deepEqual((out.spec as { containers: Array<{ name: string }> }).containers.map((c) => c.name), ['mine', 'b', 'new', 'a']);
  });

  it('removes list items and struct fields the applier stops applying, keeping those others own', () => {
    const a = apply(null, base({ spec: { containers: [{ name: 'x', image: '1' }, { name: 'y', image: '2' }], template: { image: 'i', pull: 'p' } } }), 'a');
    const b = apply(a, base({ spec: { template: { pull: 'p' } } }), 'b');
    const a2 = apply(b, base({ spec: { containers: [{ name: 'x', image: '1' }] } }), 'a');
    assert.deepEqual(a2.spec, { containers: [{ name: 'x', image: '1' }], template: { pull: 'p' } });
  });

  it('an Update manager keeps a field alive that an applier drops', () => {
    const a = apply(null, base({ data: { k: '1' } }), 'a');
    const edited = structuredClone(a);
    edited.data = { k: '2' };
    trackUpdate(a, edited, 'kubectl-edit', scope());
    const a2 = apply(edited, base({ data: {} }), 'a');
    assert.deepEqual(a2.data, { k: '2' });
  });

  it('rejects undeclared fields and map-list items without their key', () => {
    assert.throws(() => apply(null, base({ spec: { bogus: 1 } }), 'a'), (e: unknown) => e instanceof TypedValueError && e.message === '.spec.bogus: field not declared in schema');
    assert.throws(
      () => apply(null, base({ spec: { containers: [{ image: 'x' }] } }), 'a'),
      (e: unknown) => e instanceof TypedValueError && /omits key field "name"/.test(e.message),
    );
  });

  it('kubectl takes over fields recorded by client-side apply without conflicts and keeps the annotation in step', () => {
    const lastApplied = JSON.stringify(base({ data: { a: '1' } }));
    const csa = base({ data: { a: '1', other: 'x' } });
    csa.metadata!.annotations = { 'kubectl.kubernetes.io/last-applied-configuration': lastApplied };
    trackUpdate(null, csa, 'kubectl-client-side-apply', scope());
    const ssa = apply(csa, base({ data: { a: '2' } }), 'kubectl');
    assert.equal((ssa.data as Record<string, string>).a, '2');
    assert.equal((ssa.metadata!.annotations as Record<string, string>)['kubectl.kubernetes.io/last-applied-configuration'], '{"apiVersion":"v1","data":{"a":"2"},"kind":"Thing","metadata":{"name":"x","namespace":"ns"}}\n');
    // A field client-side apply did not record (set by someone else) still conflicts.
    const err = conflictOf(() => apply(csa, base({ data: { other: 'y' } }), 'kubectl'));
    assert.equal(err.causes[0].field, '.data.other');
  });

  it('applying the same configuration again only moves the timestamp', () => {
    const a = apply(null, base({ data: { k: '1' } }), 'a');
    const again = apply(a, base({ data: { k: '1' } }), 'a', false, scope({ now: () => T1 }));
    assert.equal(entries(again)[0].time, T1);
    keepTimestampsWhenUnchanged(again, a);
    assert.deepEqual(again, a);
  });
});

describe('managedFields encoding', () => {
  it('round-trips FieldsV1 with "." members, keys and values', () => {
    const doc = { 'f:a': { '.': {}, 'f:b': {} }, 'f:l': { 'k:{"name":"x","port":1}': { '.': {}, 'f:name': {} }, 'v:"s"': {} } };
    assert.deepEqual(encodeFieldsV1(decodeFieldsV1(doc)), doc);
    assert.deepEqual(Object.keys(encodeFieldsV1(decodeFieldsV1({ 'f:l': { 'k:{"port":1,"name":"x"}': {} } }))['f:l'] as object), ['k:{"name":"x","port":1}']);
  });

  it('orders entries Apply first, then by time and manager', () => {
    const m = decodeManagedFields([
      { manager: 'z', operation: 'Update', apiVersion: 'v1', time: T0, fieldsType: 'FieldsV1', fieldsV1: { 'f:a': {} } },
      { manager: 'b', operation: 'Apply', apiVersion: 'v1', time: T1, fieldsType: 'FieldsV1', fieldsV1: { 'f:a': {} } },
      { manager: 'a', operation: 'Apply', apiVersion: 'v1', time: T1, fieldsType: 'FieldsV1', fieldsV1: { 'f:a': {} } },
    ]);
    assert.deepEqual(encodeManagedFields(m)!.map((e) => e.manager), ['a', 'b', 'z']);
    assert.equal(managerIdentifier({ manager: 'm', operation: 'Apply', apiVersion: 'v1', subresource: '' }), '{"manager":"m","operation":"Apply"}');
  });

  it('derives the default manager from the User-Agent as upstream', () => {
    assert.equal(managerFromUserAgent('kubectl/v1.32.0 (linux/amd64) kubernetes/abc'), 'kubectl');
    assert.equal(managerFromUserAgent('my\u0007tool/1'), 'mytool');
    assert.equal(managerFromUserAgent(undefined), '');
    assert.equal(managerFromUserAgent('x'.repeat(300)).length, 128);
  });

  it('answers a repeated User-Agent the same as the first time, and each of many distinct ones its own (the memo is bounded, not shared)', () => {
    for (let round = 0; round < 2; round++) {
      assert.equal(managerFromUserAgent('kubectl/v1.32.0 (linux/amd64) kubernetes/abc'), 'kubectl');
      assert.equal(managerFromUserAgent('my\u0007tool/1'), 'mytool');
    }
    for (let i = 0; i < 1000; i++) assert.equal(managerFromUserAgent(`tool-${i}/1.0`), `tool-${i}`);
    assert.equal(managerFromUserAgent('kubectl/v1.32.0 (linux/amd64) kubernetes/abc'), 'kubectl');
  });
});

describe('objects the schema cannot walk', () => {
  it('an update of an ill-formed object drops managedFields instead of failing (validation answers)', () => {
    const obj = base({ spec: { containers: [null, { image: 'no-name' }] } });
    obj.metadata!.managedFields = [{ manager: 'm', operation: 'Apply', apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1: { 'f:data': {} } }];
    trackUpdate(null, obj, 'm', scope());
    assert.equal(obj.metadata!.managedFields, undefined);
  });
});

describe('custom resource schemas', () => {
  it('accepts apiVersion, kind and metadata of embedded resources, and deduces preserved unknown fields', () => {
    const crSchema: FieldSchema = {
      type: 'object',
      properties: {
        apiVersion: str,
        kind: str,
        metadata,
        spec: {
          type: 'object',
          properties: {
            template: { type: 'object', 'x-kubernetes-embedded-resource': true, properties: { spec: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } } as FieldSchema,
          },
        },
      },
    };
    const s = scope({ type: { schema: crSchema }, apiVersion: 'example.com/v1', emptyObject: { apiVersion: 'example.com/v1', kind: 'W' } });
    const config = { apiVersion: 'example.com/v1', kind: 'W', metadata: { name: 'w' }, spec: { template: { apiVersion: 'v1', kind: 'Pod', metadata: { labels: { a: 'b' } }, spec: { free: { x: 1 }, list: [1] } } } };
    const out = applyConfiguration(null, config, 'm', false, s);
    assert.deepEqual(fieldsOf(out, 'm'), {
      'f:spec': {
        'f:template': {
          'f:apiVersion': {},
          'f:kind': {},
          'f:metadata': { 'f:labels': { 'f:a': {} } },
          'f:spec': { 'f:free': { '.': {}, 'f:x': {} }, 'f:list': {} },
        },
      },
    });
  });
});
