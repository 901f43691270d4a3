import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ApiError } from '../errors/api-error.js';
import { PatchError, REJECTED_PATCH_MESSAGE, goFormat, goJsonKind, goTypeName } from './patch-error.js';

describe('PatchError', () => {
  it('is an ApiError whose status carries code, reason and message', () => {
    const err = PatchError.malformed('Invalid JSON Patch');
    assert.ok(err instanceof ApiError);
    assert.ok(err instanceof Error);
    assert.equal(err.code, 400);
    assert.equal(err.reason, 'BadRequest');
    assert.equal(err.message, 'Invalid JSON Patch');
    assert.deepEqual(err.status, {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'Invalid JSON Patch',
      reason: 'BadRequest',
      code: 400,
    });
  });

  it('renders a rejected patch as upstream generic 422 with empty details, keeping the cause in detail', () => {
    const err = PatchError.rejected('testing value /a failed: test failed');
    assert.equal(err.code, 422);
    assert.equal(err.reason, 'Invalid');
    assert.equal(err.message, REJECTED_PATCH_MESSAGE);
    assert.equal(err.message, 'the server rejected our request due to an error in our request');
    assert.deepEqual(err.status.details, {});
    assert.equal(err.detail, 'testing value /a failed: test failed');
  });

  it('prefixes the 413 for too many operations like NewRequestEntityTooLargeError', () => {
    const err = PatchError.tooManyOperations(10000, 10001);
    assert.equal(err.code, 413);
    assert.equal(err.reason, 'RequestEntityTooLarge');
    assert.equal(err.message, 'Request entity too large: The allowed maximum operations in a JSON patch is 10000, got 10001');
  });

  it('answers 400 BadRequest with upstream\'s text where upstream answers 500 (bad input never gets a 500)', () => {
    const err = PatchError.unhandled('merging lists cannot yet be specified in the patch');
    assert.equal(err.code, 400);
    assert.equal(err.reason, 'BadRequest');
    assert.equal(err.status.message, 'merging lists cannot yet be specified in the patch');
  });

  it('omits the reason of a 500, as upstream StatusReasonUnknown is empty', () => {
    const err = new PatchError(500, '', 'Invalid JSON Document');
    assert.equal(err.code, 500);
    assert.equal(err.reason, '');
    assert.equal('reason' in err.status, false);
  });

  it('builds the strategic-merge texts upstream produces', () => {
    assert.equal(PatchError.noMergeKey({ image: 'nginx' }, 'name').message, 'map: map[image:nginx] does not contain declared merge key: name');
    assert.equal(PatchError.badArgType('[]interface {}', 'x').message, 'expected a []interface {}, but received a string');
    assert.equal(PatchError.badArgType('[]interface {}', null).message, 'expected a []interface {}, but received a %!s(<nil>)');
    assert.equal(
      PatchError.unknownPatchType(5, { $patch: 5 }).message,
      'unknown patch type: %!s(int64=5) in map: map[$patch:5]',
    );
  });
});

describe('goFormat', () => {
  it('prints maps with sorted keys and slices space-separated, like %v', () => {
    assert.equal(goFormat({ b: [1, 'x'], a: { d: true, c: null } }), 'map[a:map[c:<nil> d:true] b:[1 x]]');
  });

  it('prints integers plainly and other floats in shortest g form', () => {
    assert.equal(goFormat(80), '80');
    assert.equal(goFormat(-3), '-3');
    assert.equal(goFormat(1.5), '1.5');
    assert.equal(goFormat(1234567.5), '1.2345675e+06');
    assert.equal(goFormat(0.000015), '1.5e-05');
    assert.equal(goFormat(0.0001), '0.0001');
  });

  it('marks non-strings under %s as Go bad-verb output', () => {
    assert.equal(goFormat('merge', true), 'merge');
    assert.equal(goFormat(true, true), '%!s(bool=true)');
    assert.equal(goFormat(null, true), '%!s(<nil>)');
  });
});

describe('goTypeName and goJsonKind', () => {
  it('names decoded JSON values by their Go type', () => {
    assert.equal(goTypeName({}), 'map[string]interface {}');
    assert.equal(goTypeName([]), '[]interface {}');
    assert.equal(goTypeName(1), 'int64');
    assert.equal(goTypeName(1.5), 'float64');
    assert.equal(goTypeName('s'), 'string');
    assert.equal(goTypeName(false), 'bool');
    assert.equal(goTypeName(null), '');
  });

  it('names JSON values as encoding/json type errors do', () => {
    assert.equal(goJsonKind({}), 'object');
    assert.equal(goJsonKind([]), 'array');
    assert.equal(goJsonKind(2), 'number');
    assert.equal(goJsonKind('s'), 'string');
    assert.equal(goJsonKind(true), 'bool');
  });
});
