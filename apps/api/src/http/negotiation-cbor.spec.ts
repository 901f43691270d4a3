import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApiError } from '@plinth/apimachinery';
import { negotiate } from './negotiation.js';

describe('negotiate with and without CBOR (CBORServingAndStorage)', () => {
  it('serves application/cbor only when the gate is on, and words the 406 as upstream', () => {
    assert.equal(negotiate('application/cbor', true, true).contentType, 'application/cbor');
    assert.throws(
      () => negotiate('application/cbor', true, false),
      (err: unknown) => err instanceof ApiError && err.code === 406 && err.message === 'only the following media types are accepted: application/json, application/yaml',
    );
    assert.equal(negotiate('application/cbor, application/json;q=0.5', true, false).contentType, 'application/json');
  });

  it('orders by q-value and takes wildcards as JSON', () => {
    assert.equal(negotiate('application/json;q=0.2, application/cbor;q=0.8', true, true).encoding, 'cbor');
    assert.equal(negotiate('*/*', true, true).encoding, 'json');
    assert.equal(negotiate('application/cbor;as=PartialObjectMetadata;g=meta.k8s.io;v=v1', true, true).contentType, 'application/cbor;as=PartialObjectMetadata;v=v1;g=meta.k8s.io');
  });
});
