import protobuf from 'protobufjs';

/** Upstream's EncryptedDEKSourceType: the DEK itself (older writers) or a seed for HKDF-derived keys. */
export const DEK_SOURCE_AES_GCM_KEY = 0;
export const DEK_SOURCE_HKDF_SHA256_XNONCE_AES_GCM_SEED = 1;

/** Upstream's KMS v2 EncryptedObject (k8s.io/apiserver/.../kmsv2/v2/api.proto), as stored after `k8s:enc:kms:v2:<name>:`. */
export interface EncryptedObject {
  encryptedData: Buffer;
  keyID: string;
  encryptedDEKSource: Buffer;
  annotations: Record<string, Buffer>;
  encryptedDEKSourceType: number;
}

// The message as upstream declares it, built with protobufjs reflection (no generated code to keep in step).
const TYPE = protobuf.Type.fromJSON('EncryptedObject', {
  fields: {
    encryptedData: { type: 'bytes', id: 1 },
    keyID: { type: 'string', id: 2 },
    encryptedDEKSource: { type: 'bytes', id: 3 },
    annotations: { keyType: 'string', type: 'bytes', id: 4 } as protobuf.IMapField,
    encryptedDEKSourceType: { type: 'int32', id: 5 },
  },
});

const KEY_ID_MAX = 1024;
const DEK_SOURCE_MAX = 1024;
const ANNOTATIONS_MAX = 32 * 1024;

/** Upstream's ValidateEncryptedObject, with its messages. Throws an Error. Pure. */
export function validateEncryptedObject(o: EncryptedObject): void {
  if (o.encryptedDEKSourceType !== DEK_SOURCE_AES_GCM_KEY && o.encryptedDEKSourceType !== DEK_SOURCE_HKDF_SHA256_XNONCE_AES_GCM_SEED) {
    throw new Error(`unknown encryptedDEKSourceType: ${o.encryptedDEKSourceType}`);
  }
  if (o.encryptedData.length === 0) throw new Error('encrypted data is empty');
  if (o.encryptedDEKSource.length === 0) throw new Error('failed to validate encrypted DEK source: encrypted DEK source is empty');
  if (o.encryptedDEKSource.length > DEK_SOURCE_MAX) {
    throw new Error(`failed to validate encrypted DEK source: encrypted DEK source is ${o.encryptedDEKSource.length} bytes, which exceeds the max size of ${DEK_SOURCE_MAX}`);
  }
  if (o.keyID === '') throw new Error('failed to validate key id: keyID is empty');
  if (o.keyID.length > KEY_ID_MAX) throw new Error(`failed to validate key id: keyID is ${o.keyID.length} bytes, which exceeds the max size of ${KEY_ID_MAX}`);
  const size = Object.entries(o.annotations).reduce((n, [k, v]) => n + k.length + v.length, 0);
  if (size > ANNOTATIONS_MAX) throw new Error(`failed to validate annotations: annotations exceeds the max size of ${ANNOTATIONS_MAX}, got ${size}`);
}

/** The protobuf encoding of a validated EncryptedObject. Throws when it is not valid. */
export function encodeEncryptedObject(o: EncryptedObject): Buffer {
  validateEncryptedObject(o);
  return Buffer.from(TYPE.encode(TYPE.fromObject(o)).finish());
}

/** The EncryptedObject of stored bytes, validated. Throws an Error (protobuf's or upstream's validation message). */
export function decodeEncryptedObject(data: Buffer): EncryptedObject {
  const m = TYPE.toObject(TYPE.decode(data), { bytes: Buffer, defaults: true }) as {
    encryptedData: Uint8Array;
    keyID: string;
    encryptedDEKSource: Uint8Array;
    annotations?: Record<string, Uint8Array>;
    encryptedDEKSourceType: number;
  };
  const o: EncryptedObject = {
    encryptedData: Buffer.from(m.encryptedData),
    keyID: m.keyID,
    encryptedDEKSource: Buffer.from(m.encryptedDEKSource),
    annotations: Object.fromEntries(Object.entries(m.annotations ?? {}).map(([k, v]) => [k, Buffer.from(v)])),
    encryptedDEKSourceType: m.encryptedDEKSourceType,
  };
  validateEncryptedObject(o);
  return o;
}
