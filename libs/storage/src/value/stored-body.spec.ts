import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { afterEach, describe, it } from 'node:test';
import { isStorageError } from '../storage-error.js';
import { AesGcmTransformer } from './aes-transformers.js';
import { IDENTITY } from './identity-transformer.js';
import {
  configurePlaintextCache,
  ENCRYPTED_FIELD,
  forgetTenantPlaintexts,
  installResourceTransformers,
  isStaleBody,
  openBody,
  plaintextCacheSize,
  type ResourceTransformers,
  registryKey,
  sealBody,
} from './stored-body.js';
import { DEFAULT_PLAINTEXT_CACHE_BYTES } from './plaintext-cache.js';
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
      () => openBody(key, stored, { inList: true }),
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

/** An AES-GCM transformer that counts its decryptions. */
class CountingGcm extends AesGcmTransformer {
  reads = 0;
  override fromStorage(data: Buffer, aad: Buffer) {
    this.reads++;
    return super.fromStorage(data, aad);
  }
}

describe('the plaintext cache of encrypted reads', () => {
  afterEach(() => configurePlaintextCache(DEFAULT_PLAINTEXT_CACHE_BYTES));

  it('decrypts a stored value once for cached reads, and gives every reader a body of its own', () => {
    const k = new CountingGcm(randomBytes(32));
    install(aesgcm(['key1', k]));
    const stored = sealBody(key, body);
    configurePlaintextCache(DEFAULT_PLAINTEXT_CACHE_BYTES);
    const first = openBody(key, stored, { cached: true });
    (first.data as Record<string, string>).password = 'changed';
    const second = openBody(key, stored, { cached: true });
    assert.equal(k.reads, 1);
    assert.deepEqual(second, body);
    openBody(key, stored);
    assert.equal(k.reads, 2, 'a read that is not cached decrypts');
  });

  it('remembers what a write sealed, so that reading it back does not decrypt', () => {
    configurePlaintextCache(DEFAULT_PLAINTEXT_CACHE_BYTES);
    const k = new CountingGcm(randomBytes(32));
    install(aesgcm(['key1', k]));
    const stored = sealBody(key, body);
    assert.deepEqual(openBody(key, stored, { cached: true }), body);
    assert.equal(k.reads, 0);
  });

  it('misses for another stored value of the object, and for the same value under another tenant', () => {
    const k = new CountingGcm(randomBytes(32));
    install(aesgcm(['key1', k]));
    const v1 = sealBody(key, body);
    const v2 = sealBody(key, { ...body, data: { password: 'bmV3' } });
    configurePlaintextCache(DEFAULT_PLAINTEXT_CACHE_BYTES);
    openBody(key, v1, { cached: true });
    assert.deepEqual(openBody(key, v2, { cached: true }).data, { password: 'bmV3' });
    assert.equal(k.reads, 2);
    assert.throws(() => openBody({ ...key, tenant: 'other' }, v2, { cached: true }), (e: unknown) => isStorageError(e, 'Internal'));
  });

  it('does not serve a value whose key a new configuration removed', () => {
    configurePlaintextCache(DEFAULT_PLAINTEXT_CACHE_BYTES);
    install(aesgcm(['key1', new AesGcmTransformer(randomBytes(32))]));
    const stored = sealBody(key, body);
    openBody(key, stored, { cached: true });
    uninstall();
    install(aesgcm(['key2', new AesGcmTransformer(randomBytes(32))]));
    assert.throws(() => openBody(key, stored, { cached: true }), (e: unknown) => isStorageError(e, 'Internal') && e.message === 'no matching key was found for the provided AES transformer');
  });

  it('forgets a deleted tenant\'s plaintexts, and holds none when turned off', () => {
    configurePlaintextCache(DEFAULT_PLAINTEXT_CACHE_BYTES);
    const k = new CountingGcm(randomBytes(32));
    install(aesgcm(['key1', k]));
    const other = { ...key, tenant: 'beta' };
    const mine = sealBody(key, body);
    const theirs = sealBody(other, body);
    assert.equal(plaintextCacheSize(), 2);
    forgetTenantPlaintexts('acme');
    assert.equal(plaintextCacheSize(), 1);
    openBody(other, theirs, { cached: true });
    assert.equal(k.reads, 0);
    openBody(key, mine, { cached: true });
    assert.equal(k.reads, 1);
    configurePlaintextCache(0);
    sealBody(key, body);
    openBody(key, mine, { cached: true });
    openBody(key, mine, { cached: true });
    assert.equal(k.reads, 3);
    assert.equal(plaintextCacheSize(), 0);
  });

  it('stays within its bound in bytes, dropping the least recently used', () => {
    configurePlaintextCache(16 * 1024);
    install(aesgcm(['key1', new AesGcmTransformer(randomBytes(32))]));
    for (let i = 0; i < 100; i++) sealBody({ ...key, name: `s-${i}` }, body);
    assert.ok(plaintextCacheSize() > 0 && plaintextCacheSize() < 100, `held ${plaintextCacheSize()}`);
  });
});
