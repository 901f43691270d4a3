/**
 * A deep copy of a JSON value (what JSON.parse, YAML or the storage layer
 * produce: plain objects, arrays, strings, numbers, booleans, null).
 * Pure: never mutates `v`. Keys whose value is undefined are kept, as
 * structuredClone keeps them; an own `__proto__` key (a valid ConfigMap
 * data key, kept by JSON.parse as an own property) stays an own property
 * and never becomes the copy's prototype. Anything else that is not plain
 * JSON (a Date, a Buffer, a class instance) is copied by structuredClone.
 *
 * Why not structuredClone for everything: it serialises the value through
 * V8's serializer and back, about six times slower than this walk for a
 * 1 KiB object, and the write path copies every object at least twice.
 * rfdc, the usual fast clone, assigns `__proto__` keys and so would turn
 * such a key into the copy's prototype.
 */
export function cloneJsonValue<T>(v: T): T {
  return copyValue(v) as T;
}

function copyValue(v: unknown): unknown {
  if (typeof v !== 'object' || v === null) return v;
  if (Array.isArray(v)) {
    const out = new Array<unknown>(v.length);
    for (let i = 0; i < v.length; i++) out[i] = copyValue(v[i]);
    return out;
  }
  const proto = Object.getPrototypeOf(v);
  if (proto !== Object.prototype && proto !== null) return structuredClone(v);
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(v)) {
    const value = copyValue((v as Record<string, unknown>)[k]);
    if (k === '__proto__') Object.defineProperty(out, k, { value, enumerable: true, writable: true, configurable: true });
    else out[k] = value;
  }
  return out;
}
