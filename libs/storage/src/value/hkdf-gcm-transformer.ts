import { createHmac } from 'node:crypto';
import { AesGcmTransformer, pooledRandomBytes, type RandomSource } from './aes-transformers.js';
import type { ReadValue, ValueTransformer } from './value-transformer.js';

/** The seed size KMS v2 generates (upstream's MinSeedSizeExtendedNonceGCM). */
export const HKDF_SEED_SIZE = 32;
const INFO = 32;

/**
 * HKDF-SHA256's expand step for one 32-byte output (RFC 5869, no extract,
 * as upstream's sha256KDFExpandOnly): T(1) = HMAC(seed, info || 0x01).
 */
function expandOnly(seed: Buffer, info: Buffer): Buffer {
  return createHmac('sha256', seed).update(info).update(Buffer.from([1])).digest();
}

/**
 * Upstream's KMS v2 data transformer (aes.NewHKDFExtendedNonceGCMTransformer):
 * every write draws 32 random bytes of `info`, derives a one-use AES-256
 * key as HKDF-SHA256-Expand(seed, info), and stores `info`, a random
 * 12-byte nonce, then the AES-GCM ciphertext and tag, the object's key as
 * additional data. One seed thus serves any number of writes without
 * nonce wear-out. Synchronous and pure apart from the random source.
 */
export class HkdfGcmTransformer implements ValueTransformer {
  constructor(
    private readonly seed: Buffer,
    private readonly random: RandomSource = pooledRandomBytes,
  ) {
    if (seed.length < HKDF_SEED_SIZE) throw new Error(`invalid seed length ${seed.length} used for key generation`);
  }

  fromStorage(data: Buffer, aad: Buffer): ReadValue {
    if (data.length < INFO) throw new Error('the stored data was shorter than the required size');
    return new AesGcmTransformer(expandOnly(this.seed, data.subarray(0, INFO))).fromStorage(data.subarray(INFO), aad);
  }

  toStorage(data: Buffer, aad: Buffer): Buffer {
    const info = this.random(INFO);
    // After the info, the value is upstream's aesgcm format (nonce, ciphertext, tag) under the derived key.
    return Buffer.concat([info, new AesGcmTransformer(expandOnly(this.seed, info), this.random).toStorage(data, aad)]);
  }
}
