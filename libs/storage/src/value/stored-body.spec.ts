import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { afterEach, describe, it } from 'node:test';
import { isStorageError } from '../storage-error.js';
import { AesGcmTransformer } from './aes-transformers.js';
import { IDENTITY } from './identity-transformer.js';
import { ENCRYPTED_FIELD, installResourceTransformers, isStaleBody, openBody, type ResourceTransformers, registryKey, sealBody } from './stored-body.js';
import { PrefixTransformers, type ValueTransformer } from './value-transformer.js';

const key = { tenant: 'acme', resource: 'secrets', namespace: 'ns', name: 'db' };
const body = {
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name: 'db', namespace: 'ns', uid: 'u-1', labels: { app: 'web' }, annotations: { note: 'hunter2' }, finalizers: ['f'] },
  data: { password: Buffer.from('hunter2').toString('base64') },
};

function aesgcm(...keys: Array<[string, ValueTransformer]>): PrefixTransformers {
  const named = new PrefixTransformers('no matching key was found for the provided AES transformer', keys.map(([n, t]) => ({ prefix: Buffer.from(`${n}:`), transformer: t })));
  return new PrefixTransformers('no matching prefix found', [{ prefix: Buffer.from('k8s:enc:aesgcm:v1:'), transformer: named }]);
}

function install(transformer: PrefixTransformers | undefined, encrypts = true): void {
  const t: ResourceTransformers = { forResource: (r) => (r === 'secrets' && transformer ? { transformer, encrypts } : undefined) };
  uninstall = installResourceTransformers(t);
}
let uninstall = () => {};
afterEach(() => uninstall());

describe('encrypted bodies (the storage boundary)', () => {
  const k1 = new AesGcmTransformer(randomBytes(32));

  it('stores upstream\'s prefix and ciphertext, keeping only labels, uid, ownerReferences, finalizers and deletionTimestamp readable', () => {
    install(aesgcm(['key1', k1]));
    const stored = sealBody(key, body);
    assert.match(String(stored[ENCRYPTED_FIELD]), /^k8s:enc:aesgcm:v1:key1:[A-Za-z0-9+/=]+$/);
    assert.deepEqual(stored.metadata, { uid: 'u-1', labels: { app: 'web' }, finalizers: ['f'] });
    assert.equal(JSON.stringify(stored).includes('hunter2'), false);
    assert.equal(JSON.stringify(stored).includes(body.data.password), false);
    assert.deepEqual(openBody(key, { ...stored, metadata: { ...(stored.metadata as object), resourceVersion: '7' } }), { ...body, metadata: { ...body.metadata, resourceVersion: '7' } });
  });

  it('binds the ciphertext to its object: the same value under another tenant does not decrypt', () => {
    install(aesgcm(['key1', k1]));
    const stored = sealBody(key, body);
    assert.throws(() => openBody({ ...key, tenant: 'other' }, stored), (e: unknown) => isStorageError(e, 'Internal') && e.message === 'cipher: message authentication failed');
  });

  it('answers upstream\'s internal error when the key is gone, naming the key in lists', () => {
    install(aesgcm(['key1', k1]));
    const stored = sealBody(key, body);
    uninstall();
    install(aesgcm(['key2', new AesGcmTransformer(randomBytes(32))]));
    assert.throws(() => openBody(key, stored), (e: unknown) => isStorageError(e, 'Internal') && e.message === 'no matching key was found for the provided AES transformer');
    assert.throws(
      () => openBody(key, stored, true),
      (e: unknown) => isStorageError(e, 'Internal') && e.message === 'unable to transform key "/registry/secrets/ns/db": no matching key was found for the provided AES transformer',
    );
  });

  it('refuses an encrypted body once no configuration covers it, as upstream\'s identity does', () => {
    install(aesgcm(['key1', k1]));
    const stored = sealBody(key, body);
    uninstall();
    assert.throws(() => openBody(key, stored), /identity transformer tried to read encrypted data/);
  });

  it('reads plain bodies when an identity provider is configured, and refuses them otherwise', () => {
    const withIdentity = new PrefixTransformers('no matching prefix found', [...aesgcm(['key1', k1]).transformers, { prefix: Buffer.alloc(0), transformer: IDENTITY }]);
    install(withIdentity);
    assert.equal(openBody(key, body), body);
    uninstall();
    install(aesgcm(['key1', k1]));
    assert.throws(() => openBody(key, body), /^Error: no matching prefix found$/);
  });

  it('stores bodies as they are when identity is the first provider, or the resource is not configured', () => {
    install(new PrefixTransformers('no matching prefix found', [{ prefix: Buffer.alloc(0), transformer: IDENTITY }, ...aesgcm(['key1', k1]).transformers]), false);
    assert.equal(sealBody(key, body), body);
    assert.equal(sealBody({ ...key, resource: 'configmaps' }, body), body);
  });

  it('calls a body stale unless the first provider and key wrote it (an update then rewrites it)', () => {
    const k2 = new AesGcmTransformer(randomBytes(32));
    install(aesgcm(['key1', k1]));
    const old = sealBody(key, body);
    assert.equal(isStaleBody(key, old), false);
    assert.equal(isStaleBody(key, body), true);
    uninstall();
    install(aesgcm(['key2', k2], ['key1', k1]));
    assert.equal(isStaleBody(key, old), true);
    assert.equal(isStaleBody(key, sealBody(key, body)), false);
    uninstall();
    assert.equal(isStaleBody(key, body), false);
    assert.equal(isStaleBody(key, old), true);
  });

  it('names keys as upstream\'s etcd keys in messages', () => {
    assert.equal(registryKey({ tenant: 't', resource: 'apps/deployments', namespace: 'n', name: 'd' }), '/registry/apps/deployments/n/d');
    assert.equal(registryKey({ tenant: 't', resource: 'widgets.example.com', namespace: '', name: 'w' }), '/registry/example.com/widgets/w');
  });
});
