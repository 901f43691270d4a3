import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { ReadValue, ValueTransformer } from './value-transformer.js';

const GCM_NONCE = 12;
const GCM_TAG = 16;
const BLOCK = 16;

/** Where random bytes come from (tests pass a fixed IV or nonce to check known-answer vectors). */
export type RandomSource = (size: number) => Buffer;

const POOL = 4096;
let pool = Buffer.alloc(0);
let used = 0;

/**
 * Random bytes from the CSPRNG (node:crypto's randomBytes), drawn 4 KiB at
 * a time, as Node's own randomUUID does: a write's nonce (and KMS v2's
 * info) then costs a copy, not a call into OpenSSL, which was about a
 * third of encrypting a small Secret. Every caller gets bytes nobody else
 * got; a spent pool is replaced, never refilled in place, and the bytes
 * returned are a copy of their own.
 */
export function pooledRandomBytes(size: number): Buffer {
  if (size > POOL / 4) return randomBytes(size);
  if (used + size > pool.length) {
    pool = randomBytes(POOL);
    used = 0;
  }
  const out = Buffer.from(pool.subarray(used, used + size));
  used += size;
  return out;
}

/** The cipher name of an AES key of 16, 24 or 32 bytes in `mode`. Throws for any other length (config validation refuses them first). */
function cipherName(key: Buffer, mode: 'gcm' | 'cbc'): `aes-${128 | 192 | 256}-${'gcm' | 'cbc'}` {
  if (key.length !== 16 && key.length !== 24 && key.length !== 32) throw new Error(`crypto/aes: invalid key size ${key.length}`);
  return `aes-${(key.length * 8) as 128 | 192 | 256}-${mode}`;
}

/**
 * Upstream's aesgcm provider (aes.NewGCMTransformer): a random 12-byte
 * nonce, then the AES-GCM ciphertext with its 16-byte tag appended, the
 * storage key as additional authenticated data: a value moved to another
 * key does not decrypt.
 */
export class AesGcmTransformer implements ValueTransformer {
  private readonly cipher: ReturnType<typeof cipherName>;

  constructor(
    private readonly key: Buffer,
    private readonly random: RandomSource = pooledRandomBytes,
  ) {
    this.cipher = cipherName(key, 'gcm');
  }

  fromStorage(data: Buffer, aad: Buffer): ReadValue {
    if (data.length < GCM_NONCE) throw new Error('the stored data was shorter than the required size');
    if (data.length < GCM_NONCE + GCM_TAG) throw new Error('cipher: message authentication failed');
    const decipher = createDecipheriv(this.cipher as 'aes-256-gcm', this.key, data.subarray(0, GCM_NONCE), { authTagLength: GCM_TAG });
    decipher.setAAD(aad);
    decipher.setAuthTag(data.subarray(data.length - GCM_TAG));
    try {
      return { data: Buffer.concat([decipher.update(data.subarray(GCM_NONCE, data.length - GCM_TAG)), decipher.final()]), stale: false };
    } catch {
      // Go's crypto/cipher error text, which upstream's read returns.
      throw new Error('cipher: message authentication failed');
    }
  }

  toStorage(data: Buffer, aad: Buffer): Buffer {
    const nonce = this.random(GCM_NONCE);
    const cipher = createCipheriv(this.cipher as 'aes-256-gcm', this.key, nonce, { authTagLength: GCM_TAG });
    cipher.setAAD(aad);
    const body = Buffer.concat([cipher.update(data), cipher.final()]);
    return Buffer.concat([nonce, body, cipher.getAuthTag()]);
  }
}

/**
 * Upstream's aescbc provider (aes.NewCBCTransformer): a random 16-byte IV,
 * then the AES-CBC ciphertext of the data padded as PKCS#7. Not
 * authenticated (upstream recommends against it; kept for compatibility).
 */
export class AesCbcTransformer implements ValueTransformer {
  private readonly cipher: ReturnType<typeof cipherName>;

  constructor(
    private readonly key: Buffer,
    private readonly random: RandomSource = pooledRandomBytes,
  ) {
    this.cipher = cipherName(key, 'cbc');
  }

  fromStorage(data: Buffer): ReadValue {
    if (data.length < BLOCK) throw new Error('the stored data was shorter than the required size');
    const body = data.subarray(BLOCK);
    if (body.length % BLOCK !== 0) throw new Error('the stored data is not a multiple of the block size');
    // Padding is checked here, as upstream does, so that its error texts are upstream's.
    const decipher = createDecipheriv(this.cipher as 'aes-256-cbc', this.key, data.subarray(0, BLOCK)).setAutoPadding(false);
    const out = Buffer.concat([decipher.update(body), decipher.final()]);
    const pad = out.length > 0 ? out[out.length - 1] : 0;
    if (pad === 0 || pad > out.length) throw new Error('invalid PKCS7 data (empty or not padded)');
    for (let i = out.length - pad; i < out.length; i++) if (out[i] !== pad) throw new Error('invalid padding on input');
    return { data: out.subarray(0, out.length - pad), stale: false };
  }

  toStorage(data: Buffer): Buffer {
    const iv = this.random(BLOCK);
    const pad = BLOCK - (data.length % BLOCK);
    const padded = Buffer.concat([data, Buffer.alloc(pad, pad)]);
    const cipher = createCipheriv(this.cipher as 'aes-256-cbc', this.key, iv).setAutoPadding(false);
    return Buffer.concat([iv, cipher.update(padded), cipher.final()]);
  }
}
