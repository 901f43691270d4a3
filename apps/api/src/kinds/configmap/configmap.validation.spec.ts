import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fieldErrorMessage, type FieldError } from '@plinth/apimachinery';
import type { KubeObject } from '@plinth/apimachinery';
import { decodeGoBase64, validateConfigMap, validateConfigMapUpdate } from './configmap.validation.js';

const messages = (errs: FieldError[]): string[] => errs.map(fieldErrorMessage);
const b64 = (s: string): string => Buffer.from(s, 'utf8').toString('base64');

function configMap(extra: Record<string, unknown> = {}): KubeObject {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm', namespace: 'default', resourceVersion: '1' }, ...extra };
}

describe('decodeGoBase64', () => {
  it('decodes padded standard base64 and skips CR/LF', () => {
    const r = decodeGoBase64('aGVs\r\nbG8=');
    assert.ok(r.ok);
    assert.equal(Buffer.from(r.bytes).toString('utf8'), 'hello');
  });

  it('reports the input byte Go reports for truncated, unpadded and corrupt input', () => {
    assert.deepEqual(decodeGoBase64('aGVsbG8'), { ok: false, error: 'illegal base64 data at input byte 4' });
    assert.deepEqual(decodeGoBase64('YQ='), { ok: false, error: 'illegal base64 data at input byte 3' });
    assert.deepEqual(decodeGoBase64('a*cd'), { ok: false, error: 'illegal base64 data at input byte 1' });
    assert.deepEqual(decodeGoBase64('YQ==x'), { ok: false, error: 'illegal base64 data at input byte 4' });
    assert.deepEqual(decodeGoBase64('Y==='), { ok: false, error: 'illegal base64 data at input byte 1' });
  });

  it('rejects URL-safe characters', () => {
    assert.deepEqual(decodeGoBase64('-_8='), { ok: false, error: 'illegal base64 data at input byte 0' });
  });
});

describe('validateConfigMap', () => {
  it('accepts valid data and binaryData', () => {
    assert.deepEqual(validateConfigMap(configMap({ data: { 'app.conf': 'x=1' }, binaryData: { 'logo.png': b64('\u0089PNG') } })), []);
  });

  it('rejects a bad data key on data[key] with the exact message', () => {
    assert.deepEqual(messages(validateConfigMap(configMap({ data: { 'a b': 'x' } }))), [
      `data[a b]: Invalid value: "a b": a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')`,
    ]);
  });

  it('rejects a bad binaryData key on binaryData[key]', () => {
    assert.deepEqual(messages(validateConfigMap(configMap({ binaryData: { '..x': b64('1') } }))), [
      `binaryData[..x]: Invalid value: "..x": must not start with '..'`,
    ]);
  });

  it('rejects a key present in both data and binaryData', () => {
    assert.deepEqual(messages(validateConfigMap(configMap({ data: { k: 'a' }, binaryData: { k: b64('b') } }))), [
      'data[k]: Invalid value: "k": duplicate of key present in binaryData',
    ]);
  });

  it('rejects binaryData that is not valid base64', () => {
    assert.deepEqual(messages(validateConfigMap(configMap({ binaryData: { b: 'aGVsbG8' } }))), [
      'binaryData[b]: Invalid value: "<binary data>": illegal base64 data at input byte 4',
    ]);
  });

  it('allows exactly 1 MiB of payload and rejects one byte more on the whole object', () => {
    const half = 512 * 1024;
    const atLimit = configMap({ data: { a: 'x'.repeat(half) }, binaryData: { b: Buffer.alloc(half).toString('base64') } });
    assert.deepEqual(validateConfigMap(atLimit), []);
    const over = configMap({ data: { a: 'x'.repeat(half + 1) }, binaryData: { b: Buffer.alloc(half).toString('base64') } });
    const errs = validateConfigMap(over);
    assert.equal(errs.length, 1);
    assert.equal(errs[0].field, '');
    assert.equal(errs[0].type, 'FieldValueTooLong');
    assert.equal(fieldErrorMessage(errs[0]), 'Too long: may not be more than 1048576 bytes');
  });

  it('counts data values in UTF-8 bytes', () => {
    const errs = validateConfigMap(configMap({ data: { a: 'é'.repeat(512 * 1024 + 1) } }));
    assert.equal(errs.length, 1);
    assert.equal(errs[0].type, 'FieldValueTooLong');
  });

  it('applies the built-in finalizer-name rule', () => {
    const cm = configMap();
    cm.metadata.finalizers = ['custom'];
    assert.deepEqual(messages(validateConfigMap(cm)), [
      'metadata.finalizers[0]: Invalid value: "custom": name is neither a standard finalizer name nor is it fully qualified',
    ]);
  });
});

describe('validateConfigMapUpdate', () => {
  it('allows any change when the old ConfigMap is not immutable', () => {
    const old = configMap({ data: { a: '1' } });
    assert.deepEqual(validateConfigMapUpdate(configMap({ data: { a: '2' }, immutable: true }), old), []);
  });

  it('forbids changing data of an immutable ConfigMap with the exact message', () => {
    const old = configMap({ data: { a: '1' }, immutable: true });
    assert.deepEqual(messages(validateConfigMapUpdate(configMap({ data: { a: '2' }, immutable: true }), old)), [
      'data: Forbidden: field is immutable when `immutable` is set',
    ]);
  });

  it('forbids changing binaryData but treats equal bytes as unchanged', () => {
    const old = configMap({ binaryData: { b: 'aGVsbG8=' }, immutable: true });
    assert.deepEqual(validateConfigMapUpdate(configMap({ binaryData: { b: 'aGVs\nbG8=' }, immutable: true }), old), []);
    assert.deepEqual(messages(validateConfigMapUpdate(configMap({ binaryData: { b: b64('bye') }, immutable: true }), old)), [
      'binaryData: Forbidden: field is immutable when `immutable` is set',
    ]);
  });

  it('forbids unsetting immutable', () => {
    const old = configMap({ data: { a: '1' }, immutable: true });
    assert.deepEqual(messages(validateConfigMapUpdate(configMap({ data: { a: '1' }, immutable: false }), old)), [
      'immutable: Forbidden: field is immutable when `immutable` is set',
    ]);
    assert.deepEqual(messages(validateConfigMapUpdate(configMap({ data: { a: '1' } }), old)), [
      'immutable: Forbidden: field is immutable when `immutable` is set',
    ]);
  });

  it('treats a stored empty map as absent but a new empty map as a change from absent', () => {
    const storedEmpty = configMap({ data: {}, immutable: true });
    assert.deepEqual(validateConfigMapUpdate(configMap({ immutable: true }), storedEmpty), []);
    const storedAbsent = configMap({ immutable: true });
    assert.deepEqual(messages(validateConfigMapUpdate(configMap({ data: {}, immutable: true }), storedAbsent)), [
      'data: Forbidden: field is immutable when `immutable` is set',
    ]);
  });

  it('also validates the new object', () => {
    const old = configMap();
    assert.deepEqual(messages(validateConfigMapUpdate(configMap({ data: { '.': 'x' } }), old)), [
      `data[.]: Invalid value: ".": must not be '.'`,
    ]);
  });
});
