import { fieldErrors, type FieldError } from '@plinth/apimachinery';
import { isPlainObject, type KubeObject } from '@plinth/apimachinery';
import { byteLength, isConfigMapKey } from '@plinth/apimachinery';
import { validateKubeFinalizers } from '@plinth/apimachinery';

/** Upstream core.MaxSecretSize: 1 MiB, the cap on a ConfigMap's or Secret's payload. */
export const MAX_SECRET_SIZE = 1024 * 1024;

/** Upstream's detail for any change to a field frozen by `immutable: true`. */
export const IMMUTABLE_WHEN_SET_MSG = 'field is immutable when `immutable` is set';

const B64_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const B64_DECODE = new Int16Array(256).fill(-1);
for (let i = 0; i < B64_ALPHABET.length; i++) B64_DECODE[B64_ALPHABET.charCodeAt(i)] = i;
const PAD = 0x3d;

/** Outcome of decoding one JSON base64 string the way Go's encoding/json decodes []byte. */
export type Base64Result = { ok: true; bytes: Uint8Array } | { ok: false; error: string };

function isNewline(c: number | undefined): boolean {
  return c === 0x0a || c === 0x0d;
}

/**
 * One 4-character quantum of base64.StdEncoding.Decode (padding required,
 * CR/LF ignored). Appends to `out`; returns the next input offset, or the
 * byte offset Go reports as corrupt.
 */
function decodeQuantum(src: Uint8Array, start: number, out: number[]): { next: number; corruptAt?: number } {
  const buf = [0, 0, 0, 0];
  let si = start;
  let len = 4;
  let corruptAt: number | undefined;
  for (let j = 0; j < 4; j++) {
    if (si === src.length) return j === 0 ? { next: si } : { next: si, corruptAt: si - j };
    const c = src[si++];
    const v = B64_DECODE[c];
    if (v >= 0) {
      buf[j] = v;
      continue;
    }
    if (isNewline(c)) {
      j--;
      continue;
    }
    if (c !== PAD || j < 2) return { next: si, corruptAt: si - 1 };
    if (j === 2) {
      while (si < src.length && isNewline(src[si])) si++;
      if (si === src.length) return { next: si, corruptAt: src.length };
      if (src[si] !== PAD) return { next: si, corruptAt: si - 1 };
      si++;
    }
    while (si < src.length && isNewline(src[si])) si++;
    if (si < src.length) corruptAt = si;
    len = j;
    break;
  }
  const val = (buf[0] << 18) | (buf[1] << 12) | (buf[2] << 6) | buf[3];
  const bytes = [(val >> 16) & 0xff, (val >> 8) & 0xff, val & 0xff];
  out.push(...bytes.slice(0, len - 1));
  return { next: si, corruptAt };
}

/**
 * Decodes `text` as Go's encoding/json does for a []byte field
 * (base64.StdEncoding): padding required, CR/LF skipped. On failure the
 * error is Go's `illegal base64 data at input byte N`. Never throws.
 */
export function decodeGoBase64(text: string): Base64Result {
  const src = new TextEncoder().encode(text);
  const out: number[] = [];
  let si = 0;
  while (si < src.length) {
    const step = decodeQuantum(src, si, out);
    if (step.corruptAt !== undefined) return { ok: false, error: `illegal base64 data at input byte ${step.corruptAt}` };
    si = step.next;
  }
  return { ok: true, bytes: Uint8Array.from(out) };
}

/** A JSON map field as Go decodes it: undefined for nil (absent/null), otherwise the entries as strings. */
export function readStringMap(value: unknown): Record<string, string> | undefined {
  if (!isPlainObject(value)) return undefined;
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(value)) out[k] = typeof v === 'string' ? v : v == null ? '' : String(v);
  return out;
}

/**
 * A stored object's map field: stored objects drop empty maps (omitempty),
 * so an empty stored map reads back as nil, as upstream compares it.
 */
export function readStoredMap(value: unknown): Record<string, string> | undefined {
  const map = readStringMap(value);
  return map && Object.keys(map).length > 0 ? map : undefined;
}

/**
 * reflect.DeepEqual over two decoded maps: nil differs from empty, and
 * values compare by `sameValue`.
 */
export function sameMap(
  a: Record<string, string> | undefined,
  b: Record<string, string> | undefined,
  sameValue: (x: string, y: string) => boolean = (x, y) => x === y,
): boolean {
  if (a === undefined || b === undefined) return a === b;
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  return keys.every((k) => Object.prototype.hasOwnProperty.call(b, k) && sameValue(a[k], b[k]));
}

/** Two base64 strings are equal when they decode to the same bytes (or, undecodable, are identical). */
export function sameBase64(x: string, y: string): boolean {
  if (x === y) return true;
  const dx = decodeGoBase64(x);
  const dy = decodeGoBase64(y);
  if (!dx.ok || !dy.ok) return false;
  return dx.bytes.length === dy.bytes.length && dx.bytes.every((b, i) => b === dy.bytes[i]);
}

/**
 * Kind-specific checks of a ConfigMap (upstream ValidateConfigMap minus the
 * generic ObjectMeta part, which the caller runs): data and binaryData keys
 * are config keys (`data[key]`), no key in both bags, binaryData values are
 * base64, payload at most 1 MiB, plus the core-kind finalizer-name rule.
 * Pure; returns [] when valid.
 */
export function validateConfigMap(obj: KubeObject): FieldError[] {
  const errs: FieldError[] = [...validateKubeFinalizers(obj.metadata)];
  const data = readStringMap(obj.data) ?? {};
  const binaryData = readStringMap(obj.binaryData) ?? {};
  let total = 0;
  for (const [key, value] of Object.entries(data)) {
    const field = `data[${key}]`;
    for (const msg of isConfigMapKey(key)) errs.push(fieldErrors.invalid(field, key, msg));
    if (Object.prototype.hasOwnProperty.call(binaryData, key)) {
      errs.push(fieldErrors.invalid(field, key, 'duplicate of key present in binaryData'));
    }
    total += byteLength(value);
  }
  for (const [key, value] of Object.entries(binaryData)) {
    const field = `binaryData[${key}]`;
    for (const msg of isConfigMapKey(key)) errs.push(fieldErrors.invalid(field, key, msg));
    // Upstream rejects bad base64 while decoding the request; here it is reported on the key.
    const decoded = decodeGoBase64(value);
    if (decoded.ok) total += decoded.bytes.length;
    else errs.push(fieldErrors.invalid(field, '<binary data>', decoded.error));
  }
  // The empty field path marks an error about the whole object, as upstream.
  if (total > MAX_SECRET_SIZE) errs.push(fieldErrors.tooLong('', '', MAX_SECRET_SIZE));
  return errs;
}

/**
 * Upstream ValidateConfigMapUpdate minus generic ObjectMeta checks: the
 * core finalizer rule on the new metadata, then, when the old ConfigMap is
 * immutable, `immutable` may not be unset and data/binaryData may not
 * change; then validateConfigMap of the new object. Pure; returns [] when valid.
 */
export function validateConfigMapUpdate(obj: KubeObject, old: KubeObject): FieldError[] {
  const errs: FieldError[] = [...validateKubeFinalizers(obj.metadata)];
  if (old.immutable === true) {
    if (obj.immutable !== true) errs.push(fieldErrors.forbidden('immutable', IMMUTABLE_WHEN_SET_MSG));
    if (!sameMap(readStringMap(obj.data), readStoredMap(old.data))) {
      errs.push(fieldErrors.forbidden('data', IMMUTABLE_WHEN_SET_MSG));
    }
    if (!sameMap(readStringMap(obj.binaryData), readStoredMap(old.binaryData), sameBase64)) {
      errs.push(fieldErrors.forbidden('binaryData', IMMUTABLE_WHEN_SET_MSG));
    }
  }
  errs.push(...validateConfigMap(obj));
  return errs;
}
