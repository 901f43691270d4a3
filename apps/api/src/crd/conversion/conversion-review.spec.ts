import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KubeObject } from '@plinth/apimachinery';
import { checkConvertedObjects, ConversionError, convertedObjectsOf, reviewVersionOf } from './conversion-review.js';

const original = (): KubeObject => ({
  apiVersion: 'example.com/v1',
  kind: 'Widget',
  metadata: { name: 'w', namespace: 'ns', uid: 'u1', resourceVersion: '7', labels: { a: '1' }, finalizers: ['f'] },
  spec: { x: 1 },
});

describe('ConversionReview checks (upstream webhook converter)', () => {
  it('picks the first ConversionReview version Plinth speaks', () => {
    assert.equal(reviewVersionOf(['v2', 'v1beta1', 'v1']), 'v1beta1');
    assert.equal(reviewVersionOf(['v2']), undefined);
  });

  it('verifies kind, uid and result of a v1 answer; v1beta1 answers are not checked for kind or uid', () => {
    assert.throws(() => convertedObjectsOf('v1', 'u', { apiVersion: 'v1', kind: 'Status' }), /expected webhook response of apiextensions\.k8s\.io\/v1, Kind=ConversionReview, got v1, Kind=Status/);
    const review = (response: unknown) => ({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'ConversionReview', response });
    assert.throws(() => convertedObjectsOf('v1', 'u', review(undefined)), /^Error: no response provided$/);
    assert.throws(() => convertedObjectsOf('v1', 'u', review({ uid: 'x', result: { status: 'Success' } })), /expected response\.uid="u", got "x"/);
    assert.throws(() => convertedObjectsOf('v1', 'u', review({ uid: 'u', result: { status: 'Failure' } })), /response\.result\.status was 'Failure', not 'Success'/);
    assert.deepEqual(convertedObjectsOf('v1beta1', 'u', { response: { uid: 'other', convertedObjects: [1], result: { status: 'Success' } } }), [1]);
  });

  it('restores metadata from the original but keeps the labels and annotations the webhook set', () => {
    const answered = { ...original(), apiVersion: 'example.com/v2', metadata: { name: 'w', namespace: 'ns', uid: 'u1', labels: { b: '2' }, annotations: { n: 'x' }, finalizers: [] }, spec: { y: 1 } };
    const [out] = checkConvertedObjects([original()], [answered], 'example.com/v2', 'example.com/v1, Kind=Widget', false);
    assert.deepEqual(out.metadata, { name: 'w', namespace: 'ns', uid: 'u1', resourceVersion: '7', labels: { b: '2' }, annotations: { n: 'x' }, finalizers: ['f'] });
    assert.deepEqual(out.spec, { y: 1 });
  });

  it('refuses a wrong count, apiVersion, kind, name, uid or invalid labels with upstream texts', () => {
    const gvk = 'example.com/v1, Kind=Widget';
    const check = (answered: unknown[], list = false) => () => checkConvertedObjects([original()], answered, 'example.com/v2', gvk, list);
    const ok = { ...original(), apiVersion: 'example.com/v2' };
    assert.throws(check([]), (e) => e instanceof ConversionError && e.message === `conversion webhook for ${gvk} returned 0 objects, expected 1`);
    assert.throws(check([original()]), /returned invalid object at index 0: invalid groupVersion \(expected example\.com\/v2, received example\.com\/v1\)/);
    assert.throws(check([{ ...ok, kind: 'Gadget' }]), /returned invalid object at index 0: invalid kind \(expected Widget, received Gadget\)/);
    assert.throws(check([{ ...ok, metadata: { ...ok.metadata, name: 'other' } }]), /returned invalid object: must have the same name: w != other/);
    assert.throws(check([{ ...ok, metadata: { ...ok.metadata, uid: 'u2' } }], true), /returned invalid converted object at index 0: must have the same UID: u1 != u2/);
    assert.throws(check([{ ...ok, metadata: { ...ok.metadata, labels: { 'a b': '1' } } }]), /returned invalid metadata: metadata\.labels: Invalid value: "a b"/);
    assert.throws(check([{ ...ok, metadata: { ...ok.metadata, labels: { a: 1 } } }]), /metadata\.labels\[a\] must be a string, but is number in converted object/);
  });
});
