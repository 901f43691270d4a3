import { Optional } from '@marcbachmann/cel-js';

/**
 * Conversion between JSON values and the values cel-js computes with:
 * integral numbers become CEL `int` (BigInt) as Go's unstructured decoding
 * yields int64, other numbers `double`; objects stay plain objects (CEL
 * maps), arrays lists. Schema-aware conversion for CRDs is in
 * crd/cel-schema-values.ts.
 */

/** A JSON value as a CEL value, without a schema. Pure. */
export function jsonToCel(value: unknown): unknown {
  if (typeof value === 'number') return Number.isInteger(value) ? BigInt(value) : value;
  if (Array.isArray(value)) return value.map(jsonToCel);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = jsonToCel(v);
    return out;
  }
  return value;
}

/** A CEL result as JSON (BigInt → number, Optional → value or null, Date → RFC 3339). Pure. */
export function celToJson(value: unknown): unknown {
  if (typeof value === 'bigint') return Number(value);
  if (value instanceof Optional) return value.hasValue() ? celToJson(value.value()) : null;
  if (value instanceof Date) return value.toISOString();
  if (value instanceof Uint8Array) return Buffer.from(value).toString('base64');
  if (Array.isArray(value)) return value.map(celToJson);
  if (value instanceof Map) return Object.fromEntries([...value.entries()].map(([k, v]) => [String(k), celToJson(v)]));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = celToJson(v);
    return out;
  }
  return value;
}
