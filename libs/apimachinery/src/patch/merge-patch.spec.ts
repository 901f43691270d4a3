import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { applyMergePatch } from './merge-patch.js';
import { PatchError } from './patch-error.js';

function patchErrorOf(fn: () => unknown): PatchError {
  try {
    fn();
  } catch (e) {
    assert.ok(e instanceof PatchError, `expected a PatchError, got ${String(e)}`);
    return e;
  }
  assert.fail('expected a PatchError to be thrown');
}

describe('applyMergePatch', () => {
  it('deletes members set to null and merges objects recursively', () => {
    const doc = { metadata: { labels: { a: '1', b: '2' }, name: 'x' }, data: { k: 'v', old: 'o' } };
    const out = applyMergePatch(doc, { metadata: { labels: { b: null, c: '3' } }, data: { k: 'v2', old: null } });
    assert.deepEqual(out, { metadata: { labels: { a: '1', c: '3' }, name: 'x' }, data: { k: 'v2' } });
  });

  it('replaces arrays and scalars wholesale', () => {
    const out = applyMergePatch({ l: [1, 2, 3], s: 'a', n: 1 }, { l: [4], s: 'b', n: { x: 1 } });
    assert.deepEqual(out, { l: [4], s: 'b', n: { x: 1 } });
  });

  it('ignores null for a member that does not exist', () => {
    assert.deepEqual(applyMergePatch({ a: 1 }, { b: null }), { a: 1 });
  });

  it('prunes nulls inside a value inserted where nothing or a non-object was', () => {
    const out = applyMergePatch({ s: 'x' }, { n: { a: null, b: { c: null, d: 1 } }, s: { e: null, f: [1, null, 2] } });
    assert.deepEqual(out, { s: { f: [1, 2] }, n: { b: { d: 1 } } });
  });

  it('keeps nulls inside an array that replaces an object, as upstream does', () => {
    assert.deepEqual(applyMergePatch({ a: { x: 1 } }, { a: [1, null] }), { a: [1, null] });
  });

  it('treats a member whose current value is null like a missing one', () => {
    assert.deepEqual(applyMergePatch({ a: null }, { a: { b: null, c: 1 } }), { a: { c: 1 } });
  });

  it('mutates neither the document nor the patch, and shares nothing with them', () => {
    const doc = { a: { b: 1 }, l: [1] };
    const patch = { a: { c: { d: [1] } }, l: [2] };
    const docSnapshot = structuredClone(doc);
    const patchSnapshot = structuredClone(patch);
    const out = applyMergePatch(doc, patch) as { a: { c: { d: number[] } } };
    out.a.c.d.push(9);
    assert.deepEqual(doc, docSnapshot);
    assert.deepEqual(patch, patchSnapshot);
  });

  it('keeps a __proto__ member as data without touching any prototype', () => {
    const out = applyMergePatch({ a: 1 }, JSON.parse('{"__proto__": {"polluted": true}}')) as Record<string, unknown>;
    assert.equal(Object.getPrototypeOf(out), Object.prototype);
    assert.deepEqual(Object.keys(out), ['a', '__proto__']);
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
  });

  it('applies the patch kubectl sends for an edited ConfigMap', () => {
    const doc = { kind: 'ConfigMap', metadata: { name: 'cm', annotations: { keep: 'y' } }, data: { k: 'v', old: 'o' } };
    const out = applyMergePatch(doc, {
      data: { k: 'v2', old: null },
      metadata: { annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{"data":{"k":"v2"}}' } },
    });
    assert.deepEqual(out, {
      kind: 'ConfigMap',
      metadata: {
        name: 'cm',
        annotations: { keep: 'y', 'kubectl.kubernetes.io/last-applied-configuration': '{"data":{"k":"v2"}}' },
      },
      data: { k: 'v2' },
    });
  });
});

describe('applyMergePatch malformed bodies', () => {
  it('rejects a non-object body with the strict decoder text by default', () => {
    const err = patchErrorOf(() => applyMergePatch({}, [1]));
    assert.equal(err.code, 400);
    assert.equal(err.reason, 'BadRequest');
    assert.equal(err.message, 'error decoding patch: json: cannot unmarshal array into Go value of type map[string]interface {}');
  });

  it('rejects a null body as an invalid JSON patch', () => {
    const err = patchErrorOf(() => applyMergePatch({ a: 1 }, null));
    assert.equal(err.code, 400);
    assert.equal(err.message, 'Invalid JSON Patch');
  });

  it('rejects a scalar body as an invalid JSON patch when field validation is Ignore', () => {
    const err = patchErrorOf(() => applyMergePatch({ a: 1 }, 'x', { fieldValidation: 'Ignore' }));
    assert.equal(err.code, 400);
    assert.equal(err.message, 'Invalid JSON Patch');
  });

  it('returns an array body, nulls pruned, as the new document when field validation is Ignore', () => {
    assert.deepEqual(applyMergePatch({ a: 1 }, [1, null, { b: null }], { fieldValidation: 'Ignore' }), [1, {}]);
  });

  it('answers 500 for a null document', () => {
    const err = patchErrorOf(() => applyMergePatch(null, {}));
    assert.equal(err.code, 500);
    assert.equal(err.message, 'Invalid JSON Document');
  });
});
