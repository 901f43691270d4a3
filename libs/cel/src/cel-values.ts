import { Optional } from '@marcbachmann/cel-js';

/**
 * Conversion between JSON values and the values cel-js computes with:
 * integral numbers within int64 become CEL `int` (BigInt), as Go's
 * unstructured decoding yields int64 and falls back to float64, other
 * numbers `double`; objects stay plain objects (CEL maps), arrays lists.
 * The one conversion for CRD rules' untyped values and webhook
 * matchConditions; schema-aware conversion for CRDs is in
 * apps/api/src/kinds/customresourcedefinition/schema/cel-schema-values.ts.
 */

const INT64_MAX = 2 ** 63;

/** A JSON value as a CEL value, without a schema. Pure: returns a new value. */
export function jsonToCel(value: unknown): unknown {
  if (typeof value === 'number') return Number.isInteger(value) && Math.abs(value) < INT64_MAX ? BigInt(value) : value;
  if (Array.isArray(value)) return value.map(jsonToCel);
  if (value !== null && typeof value === 'object') return celMap(Object.entries(value).map(([k, v]) => [k, jsonToCel(v)]));
  return value;
}

/**
 * The CEL map of `entries`. A plain object as cel-js takes maps, each key an
 * own property (so a `__proto__` key is a key, not the object's prototype);
 * a Map when a key is `constructor`, which cel-js would read as the
 * object's class and refuse ("Unsupported type"). Any JSON key is a map key
 * in CEL, these included.
 */
export function celMap(entries: Array<[string, unknown]>): Record<string, unknown> | Map<string, unknown> {
  if (entries.some(([k]) => k === 'constructor')) return new Map(entries);
  const out: Record<string, unknown> = {};
  for (const [k, v] of entries) {
    if (k === '__proto__') Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
    else out[k] = v;
  }
  return out;
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
