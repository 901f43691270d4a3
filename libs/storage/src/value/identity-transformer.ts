import type { ReadValue, ValueTransformer } from './value-transformer.js';

const ENCRYPTED = Buffer.from('k8s:enc:');

/**
 * Upstream's identity provider (identity.NewEncryptCheckTransformer):
 * stores values as they are, and refuses to hand out a value that says it
 * is encrypted, so that encrypted data never reaches a client as if it
 * were the object.
 */
export class IdentityTransformer implements ValueTransformer {
  fromStorage(data: Buffer): ReadValue {
    if (data.length >= ENCRYPTED.length && data.subarray(0, ENCRYPTED.length).equals(ENCRYPTED)) {
      throw new Error('identity transformer tried to read encrypted data');
    }
    return { data, stale: false };
  }

  toStorage(data: Buffer): Buffer {
    return data;
  }
}

/** The one identity transformer (it has no state). */
export const IDENTITY = new IdentityTransformer();
