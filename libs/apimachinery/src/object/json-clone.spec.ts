import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { cloneJsonValue } from './json-clone.js';

describe('cloneJsonValue', () => {
  it('copies every level, so changing the copy leaves the original as it was', () => {
    const original = { metadata: { name: 'a', labels: { x: '1' }, managedFields: [{ fieldsV1: { 'f:data': {} } }] }, data: { v: 'x' }, n: 1, b: true, z: null };
    const copy = cloneJsonValue(original);
    assert.deepEqual(copy, original);
    copy.metadata.labels.x = '2';
    (copy.metadata.managedFields[0].fieldsV1 as Record<string, unknown>)['f:other'] = {};
    (copy.metadata.managedFields as unknown[]).push({ fieldsV1: {} });
    assert.deepEqual(original, { metadata: { name: 'a', labels: { x: '1' }, managedFields: [{ fieldsV1: { 'f:data': {} } }] }, data: { v: 'x' }, n: 1, b: true, z: null });
  });

  it('keeps an own __proto__ key as data and never as the prototype of the copy', () => {
    const original = JSON.parse('{"data":{"__proto__":{"polluted":"yes"},"k":"v"}}') as { data: Record<string, unknown> };
    const copy = cloneJsonValue(original);
    assert.equal(Object.getPrototypeOf(copy.data), Object.prototype);
    assert.equal((copy.data as { polluted?: string }).polluted, undefined);
    assert.deepEqual(Object.keys(copy.data), ['__proto__', 'k']);
    assert.deepEqual(Object.getOwnPropertyDescriptor(copy.data, '__proto__')?.value, { polluted: 'yes' });
    assert.equal(JSON.stringify(copy), JSON.stringify(original));
  });

  it('keeps keys whose value is undefined and copies what is not plain JSON as structuredClone does', () => {
    const when = new Date(0);
    const copy = cloneJsonValue({ a: undefined, when });
    assert.ok(Object.hasOwn(copy, 'a'));
    assert.ok(copy.when instanceof Date);
    assert.notEqual(copy.when, when);
    assert.equal(copy.when.getTime(), 0);
  });
});
