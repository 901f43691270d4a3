import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { AesCbcTransformer, AesGcmTransformer, pooledRandomBytes } from './aes-transformers.js';
import { IDENTITY } from './identity-transformer.js';
import { SecretboxTransformer } from './secretbox-transformer.js';
import { PrefixTransformers, type ValueTransformer } from './value-transformer.js';

const hex = (s: string) => Buffer.from(s.replace(/\s+/g, ''), 'hex');
const fixed = (bytes: Buffer) => (size: number) => {
  assert.equal(size, bytes.length);
  return bytes;
};

describe('aesgcm (upstream format: 12-byte nonce, ciphertext, 16-byte tag; the storage key authenticated)', () => {
  // Upstream's TestGCMLegacyDataCompatibility: output recorded from NewGCMTransformer at commit 3b1fc60d.
  const key = Buffer.from('snorlax_awesomes');
  const legacy = hex('9f27c8fcea8a58c467d8e437dbf2d85955f9b4bd912f4ef967d788a0cb07797dac0a3f0a0845605ca85ac8562b4ae1');

  it('reads the value kube-apiserver wrote (upstream test vector)', () => {
    assert.equal(new AesGcmTransformer(key).fromStorage(legacy, Buffer.from('bamboo')).data.toString(), 'pandas are the best');
  });

  it('refuses the value under other authenticated data (another object\'s key) with Go\'s message', () => {
    assert.throws(() => new AesGcmTransformer(key).fromStorage(legacy, Buffer.from('panda')), /^Error: cipher: message authentication failed$/);
  });

  it('refuses a value shorter than a nonce with upstream\'s message', () => {
    assert.throws(() => new AesGcmTransformer(key).fromStorage(Buffer.alloc(5), Buffer.alloc(0)), /the stored data was shorter than the required size/);
  });

  it('writes the nonce first, then ciphertext and tag, readable by the same key only', () => {
    const nonce = randomBytes(12);
    const t = new AesGcmTransformer(key, fixed(nonce));
    const out = t.toStorage(Buffer.from('pandas are the best'), Buffer.from('bamboo'));
    assert.deepEqual(out.subarray(0, 12), nonce);
    assert.equal(out.length, 12 + 19 + 16);
    assert.equal(new AesGcmTransformer(key).fromStorage(out, Buffer.from('bamboo')).data.toString(), 'pandas are the best');
    assert.throws(() => new AesGcmTransformer(Buffer.from('0123456789abcdef')).fromStorage(out, Buffer.from('bamboo')), /message authentication failed/);
  });
});

describe('aescbc (upstream format: 16-byte IV, then CBC of the PKCS#7-padded data)', () => {
  // NIST SP 800-38A, F.2.1 CBC-AES128.Encrypt.
  const key = hex('2b7e151628aed2a6abf7158809cf4f3c');
  const iv = hex('000102030405060708090a0b0c0d0e0f');
  const plain = hex('6bc1bee22e409f96e93d7e117393172a ae2d8a571e03ac9c9eb76fac45af8e51 30c81c46a35ce411e5fbc1191a0a52ef f69f2445df4f9b17ad2b417be66c3710');
  const cipher = hex('7649abac8119b246cee98e9b12e9197d 5086cb9b507219ee95db113a917678b2 73bed6b8e3c1743b7116e69e22229516 3ff1caa1681fac09120eca307586e1a7');

  it('encrypts as the NIST vector, with a whole block of padding after a block-aligned value', () => {
    const out = new AesCbcTransformer(key, fixed(iv)).toStorage(plain);
    assert.deepEqual(out.subarray(0, 16), iv);
    assert.deepEqual(out.subarray(16, 16 + cipher.length), cipher);
    assert.equal(out.length, 16 + cipher.length + 16);
    assert.deepEqual(new AesCbcTransformer(key).fromStorage(out).data, plain);
  });

  it('refuses data that is not whole blocks, or badly padded, with upstream\'s messages', () => {
    const t = new AesCbcTransformer(key);
    assert.throws(() => t.fromStorage(Buffer.alloc(8)), /the stored data was shorter than the required size/);
    assert.throws(() => t.fromStorage(Buffer.alloc(16 + 5)), /the stored data is not a multiple of the block size/);
    // The NIST ciphertext without its padding block: its last byte is not a padding length.
    assert.throws(() => t.fromStorage(Buffer.concat([iv, cipher])), /invalid (PKCS7 data|padding on input)/);
  });
});

describe('secretbox (upstream format: 24-byte nonce, then NaCl secretbox)', () => {
  // The NaCl distribution's secretbox test vector (firstkey, nonce, the 131-byte message).
  const key = hex('1b27556473e985d462cd51197a9a46c76009549eac6474f206c4ee0844f68389');
  const nonce = hex('69696ee955b62b73cd62bda875fc73d68219e0036b7a0b37');
  const message = hex(`be075fc53c81f2d5cf141316ebeb0c7b5228c52a4c62cbd44b66849b64244ffce5ecbaaf33bd751a1ac728d45e6c61296cdc3c01233561f41db66cce314adb310e3be8250c46f06dceea3a7fa1348057e2f6556ad6b1318a024a838f21af1fde048977eb48f59ffd4924ca1c60902e52f0a089bc76897040e082f937763848645e0705`);
  const boxed = hex(`f3ffc7703f9400e52a7dfb4b3d3305d98e993b9f48681273c29650ba32fc76ce48332ea7164d96a4476fb8c531a1186ac0dfc17c98dce87b4da7f011ec48c97271d2c20f9b928fe2270d6fb863d51738b48eeee314a7cc8ab932164548e526ae90224368517acfeabd6bb3732bc0e9da99832b61ca01b6de56244a9e88d5f9b37973f622a43d14a6599b1f654cb45a74e355a5`);

  it('seals as NaCl does (known-answer vector) and opens it', () => {
    const out = new SecretboxTransformer(key, fixed(nonce)).toStorage(message);
    assert.deepEqual(out, Buffer.concat([nonce, boxed]));
    assert.deepEqual(new SecretboxTransformer(key).fromStorage(out).data, message);
  });

  it('refuses a box that does not open, and a short one, with upstream\'s messages', () => {
    const tampered = Buffer.concat([nonce, boxed]);
    tampered[40] ^= 1;
    assert.throws(() => new SecretboxTransformer(key).fromStorage(tampered), /output array was not large enough for encryption/);
    assert.throws(() => new SecretboxTransformer(key).fromStorage(Buffer.alloc(39)), /the stored data was shorter than the required size/);
  });
});

describe('round trips of every provider, empty to several blocks', () => {
  const providers: Array<[string, ValueTransformer]> = [
    ['aesgcm-128', new AesGcmTransformer(randomBytes(16))],
    ['aesgcm-256', new AesGcmTransformer(randomBytes(32))],
    ['aescbc-192', new AesCbcTransformer(randomBytes(24))],
    ['aescbc-256', new AesCbcTransformer(randomBytes(32))],
    ['secretbox', new SecretboxTransformer(randomBytes(32))],
  ];
  for (const [name, t] of providers) {
    it(`${name} gives back every length from 0 to 70 bytes, never the plaintext itself`, () => {
      for (let n = 0; n <= 70; n++) {
        const data = randomBytes(n);
        const aad = Buffer.from(`/t/secrets/ns/s${n}`);
        const stored = t.toStorage(data, aad);
        if (n >= 8) assert.equal(stored.includes(data), false);
        assert.deepEqual(t.fromStorage(stored, aad).data, data);
      }
    });
  }
});

describe('prefix transformers (rotation as upstream: the first writes, any matching prefix reads)', () => {
  const a = new AesGcmTransformer(randomBytes(32));
  const b = new AesGcmTransformer(randomBytes(32));
  const keys = (...named: Array<[string, ValueTransformer]>) =>
    new PrefixTransformers('no matching key was found for the provided AES transformer', named.map(([n, t]) => ({ prefix: Buffer.from(`${n}:`), transformer: t })));
  const aad = Buffer.from('k');

  it('writes with the first key and reads what an older first key wrote, as stale', () => {
    const old = keys(['key1', a]).toStorage(Buffer.from('v'), aad);
    assert.ok(old.subarray(0, 5).equals(Buffer.from('key1:')));
    const rotated = keys(['key2', b], ['key1', a]);
    assert.ok(rotated.toStorage(Buffer.from('v'), aad).subarray(0, 5).equals(Buffer.from('key2:')));
    assert.deepEqual(rotated.fromStorage(old, aad), { data: Buffer.from('v'), stale: true });
  });

  it('answers upstream\'s error when the key that wrote a value is gone', () => {
    const old = keys(['key1', a]).toStorage(Buffer.from('v'), aad);
    assert.throws(() => keys(['key2', b]).fromStorage(old, aad), /^Error: no matching key was found for the provided AES transformer$/);
  });

  it('skips an identity failure and reports the failures of prefixed providers, aggregated', () => {
    const outer = new PrefixTransformers('no matching prefix found', [
      { prefix: Buffer.from('k8s:enc:aesgcm:v1:'), transformer: keys(['key1', a]) },
      { prefix: Buffer.alloc(0), transformer: IDENTITY },
    ]);
    assert.equal(outer.readsUnprefixed, true);
    const wrongKey = Buffer.concat([Buffer.from('k8s:enc:aesgcm:v1:'), keys(['key1', b]).toStorage(Buffer.from('v'), aad)]);
    assert.throws(() => outer.fromStorage(wrongKey, aad), /^Error: cipher: message authentication failed$/);
    assert.throws(() => outer.fromStorage(Buffer.from('k8s:enc:secretbox:v1:x:abc'), aad), /^Error: no matching prefix found$/);
    assert.deepEqual(outer.fromStorage(Buffer.from('{"a":1}'), aad).data.toString(), '{"a":1}');
  });

  it('identity refuses to hand out encrypted data', () => {
    assert.throws(() => IDENTITY.fromStorage(Buffer.from('k8s:enc:aesgcm:v1:key1:xyz')), /identity transformer tried to read encrypted data/);
  });
});

describe('pooled random bytes (nonces, IVs, KMS v2 info)', () => {
  it('never hands out the same bytes twice, across pool refills, and each caller owns its copy', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 2000; i++) {
      const b = pooledRandomBytes(12);
      assert.equal(b.length, 12);
      seen.add(b.toString('hex'));
    }
    assert.equal(seen.size, 2000);
    const a = pooledRandomBytes(32);
    const copy = Buffer.from(a);
    a.fill(0);
    assert.notDeepEqual(pooledRandomBytes(32), a);
    assert.ok(!copy.equals(a));
    assert.equal(pooledRandomBytes(8192).length, 8192);
  });
});
