import { createCipheriv, createDecipheriv, createHmac } from 'node:crypto';
import { pooledRandomBytes, type RandomSource } from './aes-transformers.js';
import type { ReadValue, ValueTransformer } from './value-transformer.js';

/** The seed size KMS v2 generates (upstream's MinSeedSizeExtendedNonceGCM). */
export const HKDF_SEED_SIZE = 32;
const INFO = 32;
const NONCE = 12;
const TAG = 16;

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
    const rest = data.subarray(INFO);
    if (rest.length < NONCE) throw new Error('the stored data was shorter than the required size');
    if (rest.length < NONCE + TAG) throw new Error('cipher: message authentication failed');
    const key = expandOnly(this.seed, data.subarray(0, INFO));
    const decipher = createDecipheriv('aes-256-gcm', key, rest.subarray(0, NONCE), { authTagLength: TAG });
    decipher.setAAD(aad);
    decipher.setAuthTag(rest.subarray(rest.length - TAG));
    try {
      return { data: Buffer.concat([decipher.update(rest.subarray(NONCE, rest.length - TAG)), decipher.final()]), stale: false };
    } catch {
      throw new Error('cipher: message authentication failed');
    }
  }

  toStorage(data: Buffer, aad: Buffer): Buffer {
    const info = this.random(INFO);
    const nonce = this.random(NONCE);
    const cipher = createCipheriv('aes-256-gcm', expandOnly(this.seed, info), nonce, { authTagLength: TAG });
    cipher.setAAD(aad);
    const body = Buffer.concat([cipher.update(data), cipher.final()]);
    return Buffer.concat([info, nonce, body, cipher.getAuthTag()]);
  }
}
