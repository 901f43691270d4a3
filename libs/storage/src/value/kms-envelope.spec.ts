import assert from 'node:assert/strict';
import { createDecipheriv, createHmac } from 'node:crypto';
import { describe, it } from 'node:test';
import { StorageError } from '../storage-error.js';
import { decodeEncryptedObject, DEK_SOURCE_HKDF_SHA256_XNONCE_AES_GCM_SEED, encodeEncryptedObject } from './encrypted-object.js';
import { HkdfGcmTransformer } from './hkdf-gcm-transformer.js';
import { DataKeyNeeded, withDataKeys } from './value-transformer.js';

const SEED = Buffer.alloc(32, 9);
const AAD = Buffer.from('/t/secrets/ns/a');

describe('HkdfGcmTransformer (upstream\'s KMS v2 extended-nonce AES-GCM)', () => {
  it('round-trips, with 32 bytes of info, a 12-byte nonce and a 16-byte tag around the ciphertext', () => {
    const t = new HkdfGcmTransformer(SEED);
    const out = t.toStorage(Buffer.from('hello'), AAD);
    assert.equal(out.length, 32 + 12 + 5 + 16);
    assert.equal(t.fromStorage(out, AAD).data.toString(), 'hello');
  });

  it('derives each write\'s key as HKDF-SHA256-Expand(seed, info), so a known info and nonce give a known value', () => {
    let n = 0;
    const fixed = (size: number) => Buffer.alloc(size, ++n);
    const out = new HkdfGcmTransformer(SEED, fixed).toStorage(Buffer.from('x'), AAD);
    const info = out.subarray(0, 32);
    const key = createHmac('sha256', SEED).update(info).update(Buffer.from([1])).digest();
    assert.deepEqual(info, Buffer.alloc(32, 1));
    assert.deepEqual(out.subarray(32, 44), Buffer.alloc(12, 2));
    // Plain AES-256-GCM with the derived key opens it: the format is info || nonce || ciphertext || tag.
    const d = createDecipheriv('aes-256-gcm', key, out.subarray(32, 44));
    d.setAAD(AAD);
    d.setAuthTag(out.subarray(out.length - 16));
    assert.equal(Buffer.concat([d.update(out.subarray(44, out.length - 16)), d.final()]).toString(), 'x');
    assert.throws(() => new HkdfGcmTransformer(Buffer.alloc(32, 8)).fromStorage(out, AAD), /message authentication failed/);
  });

  it('binds the value to its object\'s key, refuses tampering, short values and short seeds with upstream\'s messages', () => {
    const t = new HkdfGcmTransformer(SEED);
    const out = t.toStorage(Buffer.from('v'), AAD);
    assert.throws(() => t.fromStorage(out, Buffer.from('/other/secrets/ns/a')), /cipher: message authentication failed/);
    const bad = Buffer.from(out);
    bad[40] ^= 1;
    assert.throws(() => t.fromStorage(bad, AAD), /cipher: message authentication failed/);
    assert.throws(() => t.fromStorage(Buffer.alloc(10), AAD), /the stored data was shorter than the required size/);
    assert.throws(() => new HkdfGcmTransformer(Buffer.alloc(16)), /invalid seed length 16 used for key generation/);
  });
});

describe('EncryptedObject (upstream\'s KMS v2 stored message)', () => {
  const o = { encryptedData: Buffer.from([1, 2, 3]), keyID: 'k1', encryptedDEKSource: Buffer.from('src'), annotations: { 'a.example.com': Buffer.from('v') }, encryptedDEKSourceType: DEK_SOURCE_HKDF_SHA256_XNONCE_AES_GCM_SEED };

  it('encodes as protobuf fields 1 to 5 and decodes back', () => {
    const bytes = encodeEncryptedObject(o);
    assert.equal(bytes[0], 0x0a, 'field 1, length-delimited');
    assert.deepEqual(decodeEncryptedObject(bytes), o);
  });

  it('validates as upstream: empty data, key id or DEK source, unknown source type', () => {
    assert.throws(() => encodeEncryptedObject({ ...o, encryptedData: Buffer.alloc(0) }), /encrypted data is empty/);
    assert.throws(() => encodeEncryptedObject({ ...o, keyID: '' }), /failed to validate key id: keyID is empty/);
    assert.throws(() => encodeEncryptedObject({ ...o, encryptedDEKSource: Buffer.alloc(0) }), /encrypted DEK source is empty/);
    assert.throws(() => encodeEncryptedObject({ ...o, encryptedDEKSourceType: 7 }), /unknown encryptedDEKSourceType: 7/);
  });
});

describe('withDataKeys: the one place a data key still to fetch is awaited', () => {
  it('awaits the key and runs the transformation again', async () => {
    let loaded = false;
    let runs = 0;
    const v = await withDataKeys(() => {
      runs++;
      if (!loaded) throw new DataKeyNeeded('loading', Promise.resolve().then(() => void (loaded = true)));
      return 'done';
    });
    assert.equal(v, 'done');
    assert.equal(runs, 2);
  });

  it('rejects with the key\'s own error when it cannot be fetched, and with anything else as it is', async () => {
    const gone = new StorageError('Internal', 'crypto-erased');
    await assert.rejects(withDataKeys(() => { throw new DataKeyNeeded('loading', Promise.reject(gone)); }), (e) => e === gone);
    await assert.rejects(withDataKeys(() => { throw new Error('other'); }), /other/);
  });

  it('is a 503 (Unavailable) for a caller that does not await it', () => {
    const e = new DataKeyNeeded('loading', Promise.resolve());
    assert.equal(e.code, 'Unavailable');
  });
});
