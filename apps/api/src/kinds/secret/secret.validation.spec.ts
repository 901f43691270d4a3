import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fieldErrorMessage, type FieldError } from '@plinth/apimachinery';
import type { KubeObject } from '@plinth/apimachinery';
import { goJsonMapError, validateSecret, validateSecretUpdate } from './secret.validation.js';

const messages = (errs: FieldError[]): string[] => errs.map(fieldErrorMessage);
const b64 = (s: string): string => Buffer.from(s, 'utf8').toString('base64');
const bytes = (s: string): Uint8Array => new TextEncoder().encode(s);

function secret(extra: Record<string, unknown> = {}): KubeObject {
  return { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's', namespace: 'default', resourceVersion: '1' }, ...extra };
}

describe('goJsonMapError', () => {
  it('accepts objects and null', () => {
    assert.equal(goJsonMapError(bytes(' {"auths": {"r": [1, 2.5e-3, true, null, "\\u00e9"]}} ')), undefined);
    assert.equal(goJsonMapError(bytes('null')), undefined);
  });

  it('reports syntax errors in Go scanner wording', () => {
    assert.equal(goJsonMapError(bytes('x')), "invalid character 'x' looking for beginning of value");
    assert.equal(goJsonMapError(bytes('{"a":1,}')), "invalid character '}' looking for beginning of object key string");
    assert.equal(goJsonMapError(bytes('{"a" 1}')), "invalid character '1' after object key");
    assert.equal(goJsonMapError(bytes('{"a":1 "b":2}')), `invalid character '"' after object key:value pair`);
    assert.equal(goJsonMapError(bytes('[1 2]')), "invalid character '2' after array element");
    assert.equal(goJsonMapError(bytes('{} x')), "invalid character 'x' after top-level value");
    assert.equal(goJsonMapError(bytes('{"a":"\\q"}')), "invalid character 'q' in string escape code");
    assert.equal(goJsonMapError(bytes('"\n"')), "invalid character '\\n' in string literal");
    assert.equal(goJsonMapError(bytes("{'a':1}")), "invalid character '\\'' looking for beginning of object key string");
  });

  it('reports truncated input as Go does', () => {
    assert.equal(goJsonMapError(bytes('')), 'unexpected end of JSON input');
    assert.equal(goJsonMapError(bytes('{"a":')), 'unexpected end of JSON input');
    assert.equal(goJsonMapError(bytes('tru')), "invalid character ' ' in literal true (expecting 'e')");
    assert.equal(goJsonMapError(bytes('1.')), "invalid character ' ' after decimal point in numeric literal");
    assert.equal(goJsonMapError(bytes('1e')), "invalid character ' ' in exponent of numeric literal");
  });

  it('reports a non-object top-level value as an unmarshal type error', () => {
    assert.equal(goJsonMapError(bytes('[]')), 'json: cannot unmarshal array into Go value of type map[string]interface {}');
    assert.equal(goJsonMapError(bytes('"s"')), 'json: cannot unmarshal string into Go value of type map[string]interface {}');
    assert.equal(goJsonMapError(bytes('-1')), 'json: cannot unmarshal number into Go value of type map[string]interface {}');
    assert.equal(goJsonMapError(bytes('false')), 'json: cannot unmarshal bool into Go value of type map[string]interface {}');
  });
});

describe('validateSecret', () => {
  it('accepts an Opaque secret and one without a type', () => {
    assert.deepEqual(validateSecret(secret({ type: 'Opaque', data: { password: b64('pw') } })), []);
    assert.deepEqual(validateSecret(secret({ data: { password: b64('pw') } })), []);
  });

  it('rejects a bad data key', () => {
    assert.deepEqual(messages(validateSecret(secret({ data: { 'a/b': b64('x') } }))), [
      `data[a/b]: Invalid value: "a/b": a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')`,
    ]);
  });

  it('rejects a value that is not valid base64 without echoing it', () => {
    assert.deepEqual(messages(validateSecret(secret({ data: { token: 'aGVsbG8' } }))), [
      'data[token]: Invalid value: "<secret contents redacted>": illegal base64 data at input byte 4',
    ]);
  });

  it('caps the decoded payload at 1 MiB on the data path', () => {
    const half = Buffer.alloc(512 * 1024).toString('base64');
    assert.deepEqual(validateSecret(secret({ data: { a: half, b: half } })), []);
    assert.deepEqual(messages(validateSecret(secret({ data: { a: half, b: half, c: b64('x') } }))), [
      'data: Too long: may not be more than 1048576 bytes',
    ]);
  });

  it('folds stringData into data before checking', () => {
    assert.deepEqual(validateSecret(secret({ type: 'kubernetes.io/tls', data: { 'tls.crt': b64('c') }, stringData: { 'tls.key': 'k' } })), []);
    assert.deepEqual(messages(validateSecret(secret({ stringData: { 'bad key': 'v' } }))).length, 1);
  });

  it('requires the service-account name annotation on token secrets', () => {
    assert.deepEqual(messages(validateSecret(secret({ type: 'kubernetes.io/service-account-token' }))), [
      'metadata.annotations[kubernetes.io/service-account.name]: Required value',
    ]);
    const ok = secret({ type: 'kubernetes.io/service-account-token' });
    ok.metadata.annotations = { 'kubernetes.io/service-account.name': 'default' };
    assert.deepEqual(validateSecret(ok), []);
  });

  it('requires well-formed .dockercfg and .dockerconfigjson keys', () => {
    assert.deepEqual(messages(validateSecret(secret({ type: 'kubernetes.io/dockercfg' }))), ['data[.dockercfg]: Required value']);
    assert.deepEqual(messages(validateSecret(secret({ type: 'kubernetes.io/dockercfg', data: { '.dockercfg': b64('x') } }))), [
      `data[.dockercfg]: Invalid value: "<secret contents redacted>": invalid character 'x' looking for beginning of value`,
    ]);
    assert.deepEqual(messages(validateSecret(secret({ type: 'kubernetes.io/dockerconfigjson' }))), [
      'data[.dockerconfigjson]: Required value',
    ]);
    assert.deepEqual(
      messages(validateSecret(secret({ type: 'kubernetes.io/dockerconfigjson', data: { '.dockerconfigjson': b64('[]') } }))),
      [
        'data[.dockerconfigjson]: Invalid value: "<secret contents redacted>": json: cannot unmarshal array into Go value of type map[string]interface {}',
      ],
    );
    assert.deepEqual(validateSecret(secret({ type: 'kubernetes.io/dockerconfigjson', data: { '.dockerconfigjson': b64('{"auths":{}}') } })), []);
  });

  it('requires username or password on basic-auth secrets', () => {
    assert.deepEqual(messages(validateSecret(secret({ type: 'kubernetes.io/basic-auth' }))), [
      'data[username]: Required value',
      'data[password]: Required value',
    ]);
    assert.deepEqual(validateSecret(secret({ type: 'kubernetes.io/basic-auth', data: { username: '' } })), []);
  });

  it('requires a non-empty ssh-privatekey on ssh-auth secrets', () => {
    assert.deepEqual(messages(validateSecret(secret({ type: 'kubernetes.io/ssh-auth', data: { 'ssh-privatekey': '' } }))), [
      'data[ssh-privatekey]: Required value',
    ]);
    assert.deepEqual(validateSecret(secret({ type: 'kubernetes.io/ssh-auth', data: { 'ssh-privatekey': b64('k') } })), []);
  });

  it('requires tls.crt and tls.key on TLS secrets', () => {
    assert.deepEqual(messages(validateSecret(secret({ type: 'kubernetes.io/tls', data: { 'tls.crt': b64('c') } }))), [
      'data[tls.key]: Required value',
    ]);
    assert.deepEqual(messages(validateSecret(secret({ type: 'kubernetes.io/tls' }))), [
      'data[tls.crt]: Required value',
      'data[tls.key]: Required value',
    ]);
  });

  it('applies no key rules to unknown types', () => {
    assert.deepEqual(validateSecret(secret({ type: 'example.com/custom' })), []);
  });
});

describe('validateSecretUpdate', () => {
  it('reports a changed type as immutable with the exact message', () => {
    const old = secret({ type: 'Opaque' });
    assert.deepEqual(messages(validateSecretUpdate(secret({ type: 'example.com/other' }), old)), [
      'type: Invalid value: "example.com/other": field is immutable',
    ]);
  });

  it('treats an empty type as the Opaque default', () => {
    assert.deepEqual(validateSecretUpdate(secret({}), secret({ type: 'Opaque' })), []);
  });

  it('forbids changing data of an immutable secret', () => {
    const old = secret({ type: 'Opaque', data: { a: b64('1') }, immutable: true });
    assert.deepEqual(messages(validateSecretUpdate(secret({ type: 'Opaque', data: { a: b64('2') }, immutable: true }), old)), [
      'data: Forbidden: field is immutable when `immutable` is set',
    ]);
  });

  it('compares decoded bytes, counting stringData', () => {
    const old = secret({ type: 'Opaque', data: { a: 'aGVsbG8=' }, immutable: true });
    assert.deepEqual(validateSecretUpdate(secret({ type: 'Opaque', data: { a: 'aGVs\nbG8=' }, immutable: true }), old), []);
    assert.deepEqual(validateSecretUpdate(secret({ type: 'Opaque', stringData: { a: 'hello' }, immutable: true }), old), []);
  });

  it('forbids unsetting immutable', () => {
    const old = secret({ type: 'Opaque', immutable: true });
    assert.deepEqual(messages(validateSecretUpdate(secret({ type: 'Opaque', immutable: false }), old)), [
      'immutable: Forbidden: field is immutable when `immutable` is set',
    ]);
  });

  it('also validates the new object', () => {
    const old = secret({ type: 'kubernetes.io/tls', data: { 'tls.crt': b64('c'), 'tls.key': b64('k') } });
    assert.deepEqual(messages(validateSecretUpdate(secret({ type: 'kubernetes.io/tls', data: { 'tls.crt': b64('c') } }), old)), [
      'data[tls.key]: Required value',
    ]);
  });
});
