import nacl from 'tweetnacl';
import { pooledRandomBytes, type RandomSource } from './aes-transformers.js';
import type { ReadValue, ValueTransformer } from './value-transformer.js';

const NONCE = nacl.secretbox.nonceLength;
const OVERHEAD = nacl.secretbox.overheadLength;

/**
 * Upstream's secretbox provider (secretbox.NewSecretboxTransformer): a
 * random 24-byte nonce, then NaCl's secretbox (XSalsa20-Poly1305: the
 * 16-byte tag, then the ciphertext), with tweetnacl. Not bound to the
 * storage key (NaCl's secretbox has no additional data), as upstream.
 */
export class SecretboxTransformer implements ValueTransformer {
  private readonly key: Uint8Array;

  constructor(
    key: Buffer,
    private readonly random: RandomSource = pooledRandomBytes,
  ) {
    if (key.length !== nacl.secretbox.keyLength) throw new Error(`expected key size 32 for secretbox provider, got ${key.length}`);
    this.key = new Uint8Array(key);
  }

  fromStorage(data: Buffer): ReadValue {
    if (data.length < NONCE + OVERHEAD) throw new Error('the stored data was shorter than the required size');
    const opened = nacl.secretbox.open(data.subarray(NONCE), data.subarray(0, NONCE), this.key);
    // Upstream's (odd) message for a box that does not open.
    if (!opened) throw new Error('output array was not large enough for encryption');
    return { data: Buffer.from(opened.buffer, opened.byteOffset, opened.byteLength), stale: false };
  }

  toStorage(data: Buffer): Buffer {
    const nonce = this.random(NONCE);
    const sealed = nacl.secretbox(data, nonce, this.key);
    return Buffer.concat([nonce, sealed]);
  }
}
