import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { applyJsonPatch, MAX_JSON_PATCH_OPERATIONS } from './json-patch.js';
import { PatchError, REJECTED_PATCH_MESSAGE } from './patch-error.js';

function patchErrorOf(fn: () => unknown): PatchError {
  try {
    fn();
  } catch (e) {
    assert.ok(e instanceof PatchError, `expected a PatchError, got ${String(e)}`);
    return e;
  }
  assert.fail('expected a PatchError to be thrown');
}

/** Asserts the upstream 422 for an operation that does not apply, with the library's text as detail. */
function assertRejected(fn: () => unknown, detail: string): void {
  const err = patchErrorOf(fn);
  assert.equal(err.code, 422);
  assert.equal(err.reason, 'Invalid');
  assert.equal(err.message, REJECTED_PATCH_MESSAGE);
  assert.equal(err.detail, detail);
}

function configMap(): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'cm', annotations: { 'example.com/owner': 'x' }, finalizers: ['a', 'b'] },
    data: { k: 'v' },
  };
}

describe('applyJsonPatch operations', () => {
  it('adds, replaces and removes object members', () => {
    const out = applyJsonPatch(configMap(), [
      { op: 'add', path: '/data/n', value: '1' },
      { op: 'replace', path: '/data/k', value: 'v2' },
      { op: 'remove', path: '/metadata/annotations' },
    ]);
    assert.deepEqual(out, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'cm', finalizers: ['a', 'b'] },
      data: { k: 'v2', n: '1' },
    });
  });

  it('inserts into arrays at an index, at "-" and at a negative index counted from the new end', () => {
    const out = applyJsonPatch({ l: ['a', 'b'] }, [
      { op: 'add', path: '/l/1', value: 'x' },
      { op: 'add', path: '/l/-', value: 'end' },
      { op: 'add', path: '/l/-1', value: 'last' },
    ]);
    assert.deepEqual(out, { l: ['a', 'x', 'b', 'end', 'last'] });
  });

  it('removes and replaces array elements, negative indices counting from the end', () => {
    const out = applyJsonPatch({ l: [1, 2, 3, 4] }, [
      { op: 'remove', path: '/l/-1' },
      { op: 'replace', path: '/l/0', value: 9 },
    ]);
    assert.deepEqual(out, { l: [9, 2, 3] });
  });

  it('unescapes ~1 and ~0 in pointer tokens', () => {
    const out = applyJsonPatch(configMap(), [
      { op: 'replace', path: '/metadata/annotations/example.com~1owner', value: 'y' },
      { op: 'add', path: '/data/a~0b', value: 't' },
    ]) as { metadata: { annotations: Record<string, string> }; data: Record<string, string> };
    assert.equal(out.metadata.annotations['example.com/owner'], 'y');
    assert.equal(out.data['a~b'], 't');
  });

  it('moves a value, removing it from its source', () => {
    const out = applyJsonPatch({ a: { x: 1 }, b: {} }, [{ op: 'move', from: '/a/x', path: '/b/y' }]);
    assert.deepEqual(out, { a: {}, b: { y: 1 } });
  });

  it('copies a value without sharing it with the source', () => {
    const out = applyJsonPatch({ a: { x: [1] } }, [
      { op: 'copy', from: '/a', path: '/b' },
      { op: 'add', path: '/b/x/-', value: 2 },
    ]);
    assert.deepEqual(out, { a: { x: [1] }, b: { x: [1, 2] } });
  });

  it('passes a test op whose value deep-equals the target and then applies later ops', () => {
    const out = applyJsonPatch(configMap(), [
      { op: 'test', path: '/metadata/finalizers', value: ['a', 'b'] },
      { op: 'replace', path: '/data/k', value: 'ok' },
    ]) as { data: Record<string, string> };
    assert.equal(out.data.k, 'ok');
  });

  it('treats a missing member as matching a test for null, as upstream does', () => {
    const out = applyJsonPatch({ a: 1 }, [{ op: 'test', path: '/missing', value: null }]);
    assert.deepEqual(out, { a: 1 });
  });

  it('adds the member when replace targets a missing object key (upstream json-patch v4 behaviour)', () => {
    assert.deepEqual(applyJsonPatch({ a: 1 }, [{ op: 'replace', path: '/b', value: 2 }]), { a: 1, b: 2 });
  });

  it('uses null for an add without a value', () => {
    assert.deepEqual(applyJsonPatch({}, [{ op: 'add', path: '/a' }]), { a: null });
  });

  it('replaces the whole document for replace at the root', () => {
    assert.deepEqual(applyJsonPatch({ a: 1 }, [{ op: 'replace', path: '', value: { b: 2 } }]), { b: 2 });
  });

  it('returns an equal copy for a null body or an empty list', () => {
    const doc = configMap();
    const out = applyJsonPatch(doc, null);
    assert.deepEqual(out, doc);
    assert.notEqual(out, doc);
    assert.deepEqual(applyJsonPatch(doc, []), doc);
  });
});

describe('applyJsonPatch purity', () => {
  it('never mutates the document, even when a later operation fails', () => {
    const doc = configMap();
    const snapshot = structuredClone(doc);
    assert.throws(() =>
      applyJsonPatch(doc, [
        { op: 'replace', path: '/data/k', value: 'changed' },
        { op: 'remove', path: '/metadata/finalizers/0' },
        { op: 'test', path: '/data/k', value: 'nope' },
      ]),
    );
    assert.deepEqual(doc, snapshot);
  });

  it('does not share added values with the patch body', () => {
    const value = { nested: ['x'] };
    const patch = [{ op: 'add', path: '/v', value }];
    const out = applyJsonPatch({}, patch) as { v: { nested: string[] } };
    out.v.nested.push('y');
    assert.deepEqual(value, { nested: ['x'] });
    assert.deepEqual(patch, [{ op: 'add', path: '/v', value: { nested: ['x'] } }]);
  });

  it('refuses __proto__ tokens instead of polluting prototypes', () => {
    const err = patchErrorOf(() => applyJsonPatch({}, [{ op: 'add', path: '/__proto__/polluted', value: true }]));
    assert.equal(err.code, 422);
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
  });
});

describe('applyJsonPatch failures that upstream reports as 422', () => {
  it('rejects a failed test op', () => {
    assertRejected(() => applyJsonPatch({ a: 1 }, [{ op: 'test', path: '/a', value: 2 }]), 'testing value /a failed: test failed');
  });

  it('rejects a test op without a value against an existing member', () => {
    assertRejected(() => applyJsonPatch({ a: 1 }, [{ op: 'test', path: '/a' }]), 'testing value /a failed: test failed');
  });

  it('rejects removing a missing key', () => {
    assertRejected(
      () => applyJsonPatch({ data: {} }, [{ op: 'remove', path: '/data/x' }]),
      "error in remove for path: '/data/x': Unable to remove nonexistent key: x: missing value",
    );
  });

  it('rejects an add whose parent does not exist', () => {
    assertRejected(
      () => applyJsonPatch({}, [{ op: 'add', path: '/a/b/c', value: 1 }]),
      'add operation does not apply: doc is missing path: "/a/b/c": missing value',
    );
  });

  it('rejects walking through a scalar', () => {
    assertRejected(
      () => applyJsonPatch({ a: 'str' }, [{ op: 'replace', path: '/a/b', value: 1 }]),
      'replace operation does not apply: doc is missing path: /a/b: missing value',
    );
  });

  it('rejects an array index past the end', () => {
    assertRejected(
      () => applyJsonPatch({ l: [1] }, [{ op: 'add', path: '/l/5', value: 2 }]),
      "error in add for path: '/l/5': Unable to access invalid index: 5: invalid index referenced",
    );
  });

  it('rejects a non-numeric array index with strconv text', () => {
    assertRejected(
      () => applyJsonPatch({ l: [1] }, [{ op: 'add', path: '/l/x', value: 2 }]),
      'error in add for path: \'/l/x\': value was not a proper array index: \'x\': strconv.Atoi: parsing "x": invalid syntax',
    );
  });

  it('rejects replacing an array element that does not exist', () => {
    assertRejected(
      () => applyJsonPatch({ l: [1] }, [{ op: 'replace', path: '/l/3', value: 2 }]),
      'replace operation does not apply: doc is missing key: /l/3: missing value',
    );
  });

  it('rejects an unknown or missing op', () => {
    assertRejected(() => applyJsonPatch({}, [{ op: 'frobnicate', path: '/a' }]), 'Unexpected kind: frobnicate');
    assertRejected(() => applyJsonPatch({}, [{ path: '/a' }]), 'Unexpected kind: unknown');
    assertRejected(() => applyJsonPatch({}, [null]), 'Unexpected kind: unknown');
  });

  it('rejects operations without a path, with each op\'s own wording', () => {
    assertRejected(() => applyJsonPatch({}, [{ op: 'add', value: 1 }]), 'add operation failed to decode path: missing value');
    assertRejected(
      () => applyJsonPatch({}, [{ op: 'replace', value: 1 }]),
      'replace operation failed to decode path: operation missing path field: missing value',
    );
    assertRejected(
      () => applyJsonPatch({ a: 1 }, [{ op: 'move', path: '/b' }]),
      'move operation failed to decode from: operation, missing from field: missing value',
    );
  });

  it('rejects a move or copy from a missing location', () => {
    assertRejected(
      () => applyJsonPatch({ a: {} }, [{ op: 'move', from: '/a/x', path: '/b' }]),
      "error in move for path: 'x': Unable to remove nonexistent key: x: missing value",
    );
    assertRejected(
      () => applyJsonPatch({}, [{ op: 'copy', from: '/a/x', path: '/b' }]),
      'copy operation does not apply: doc is missing from path: /a/x: missing value',
    );
  });

  it('rejects copies that grow the document past the copy limit', () => {
    assertRejected(
      () => applyJsonPatch({ a: 'xxxxxxxx' }, [{ op: 'copy', from: '/a', path: '/b' }, { op: 'copy', from: '/a', path: '/c' }], { maxCopyBytes: 15 }),
      'Unable to complete the copy, the accumulated size increase of copy is 20, exceeding the limit 15',
    );
  });
});

describe('applyJsonPatch malformed bodies', () => {
  it('rejects a non-array body with the typed decoder text by default', () => {
    const err = patchErrorOf(() => applyJsonPatch({}, { op: 'add' }));
    assert.equal(err.code, 400);
    assert.equal(err.reason, 'BadRequest');
    assert.equal(err.message, 'error decoding patch: json: cannot unmarshal object into Go value of type []handlers.jsonPatchOp');
  });

  it('rejects a non-object operation', () => {
    const err = patchErrorOf(() => applyJsonPatch({}, ['add']));
    assert.equal(err.code, 400);
    assert.equal(err.message, 'error decoding patch: json: cannot unmarshal string into Go value of type handlers.jsonPatchOp');
  });

  it('rejects a non-string op, path or from as a struct-field type error', () => {
    const err = patchErrorOf(() => applyJsonPatch({}, [{ op: 'add', path: 3, value: 1 }]));
    assert.equal(err.code, 400);
    assert.equal(err.message, 'error decoding patch: json: cannot unmarshal number into Go struct field jsonPatchOp.path of type string');
  });

  it('uses the json-patch decoder text when field validation is Ignore', () => {
    const err = patchErrorOf(() => applyJsonPatch({}, 'x', { fieldValidation: 'Ignore' }));
    assert.equal(err.code, 400);
    assert.equal(err.message, 'json: cannot unmarshal string into Go value of type jsonpatch.Patch');
    const elementErr = patchErrorOf(() => applyJsonPatch({}, [true], { fieldValidation: 'Ignore' }));
    assert.equal(elementErr.message, 'json: cannot unmarshal bool into Go value of type jsonpatch.Operation');
  });

  it('lets a non-string op through to the 422 when field validation is Ignore', () => {
    assertRejected(() => applyJsonPatch({}, [{ op: 1, path: '/a' }], { fieldValidation: 'Ignore' }), 'Unexpected kind: unknown');
  });

  it('answers 413 past the maximum number of operations', () => {
    const ops = Array.from({ length: MAX_JSON_PATCH_OPERATIONS + 1 }, () => ({ op: 'test', path: '/a', value: 1 }));
    const err = patchErrorOf(() => applyJsonPatch({ a: 1 }, ops));
    assert.equal(err.code, 413);
    assert.equal(err.message, 'Request entity too large: The allowed maximum operations in a JSON patch is 10000, got 10001');
  });

  it('accepts exactly the maximum number of operations', () => {
    const ops = Array.from({ length: MAX_JSON_PATCH_OPERATIONS }, () => ({ op: 'test', path: '/a', value: 1 }));
    assert.deepEqual(applyJsonPatch({ a: 1 }, ops), { a: 1 });
  });
});
