import { isPlainObject } from '@plinth/apimachinery';
import type { StructuralSchema } from '@plinth/apimachinery';

/**
 * Structural defaulting (apiextensions-apiserver schema/defaulting): a
 * property's `default` fills it in when absent (or null while not
 * nullable), recursively, so defaults inside defaulted objects apply too;
 * and the pruning of nulls that would fail validation.
 */

function isNonNullableNull(v: unknown, s: StructuralSchema | undefined): boolean {
  return v === null && s !== undefined && !s.nullable;
}

function childSchema(s: StructuralSchema | undefined, key: string): StructuralSchema | undefined {
  if (!s) return undefined;
  if (s.properties && Object.hasOwn(s.properties, key)) return s.properties[key];
  return typeof s.additionalProperties === 'object' ? s.additionalProperties : undefined;
}

/** Applies defaults of `s` to `x` in place. Defaults are deep-copied. */
export function applyDefaults(x: unknown, s: StructuralSchema | undefined): void {
  if (!s) return;
  if (isPlainObject(x)) {
    for (const [k, prop] of Object.entries(s.properties ?? {})) {
      if (prop.default === undefined) continue;
      if (!Object.hasOwn(x, k) || isNonNullableNull(x[k], prop)) x[k] = structuredClone(prop.default);
    }
    const additional = typeof s.additionalProperties === 'object' ? s.additionalProperties : undefined;
    for (const k of Object.keys(x)) {
      const prop = s.properties && Object.hasOwn(s.properties, k) ? s.properties[k] : undefined;
      if (prop) applyDefaults(x[k], prop);
      else if (additional) {
        if (isNonNullableNull(x[k], additional) && additional.default !== undefined) x[k] = structuredClone(additional.default);
        applyDefaults(x[k], additional);
      }
    }
  } else if (Array.isArray(x) && s.items) {
    for (let i = 0; i < x.length; i++) {
      if (isNonNullableNull(x[i], s.items) && s.items.default !== undefined) x[i] = structuredClone(s.items.default);
      applyDefaults(x[i], s.items);
    }
  }
}

/** Removes map entries that are null where the schema is not nullable and has no default. In place. */
export function pruneNonNullableNulls(x: unknown, s: StructuralSchema | undefined): void {
  if (isPlainObject(x)) {
    for (const k of Object.keys(x)) {
      const cs = childSchema(s, k);
      if (isNonNullableNull(x[k], cs) && cs!.default === undefined) delete x[k];
      else pruneNonNullableNulls(x[k], cs);
    }
  } else if (Array.isArray(x)) {
    for (const item of x) pruneNonNullableNulls(item, s?.items);
  }
}

/** True when any node of `s` declares a default. */
export function schemaHasDefaults(s: StructuralSchema | undefined, seen = new Set<StructuralSchema>()): boolean {
  if (!s || seen.has(s)) return false;
  seen.add(s);
  if (s.default !== undefined) return true;
  if (Object.values(s.properties ?? {}).some((p) => schemaHasDefaults(p, seen))) return true;
  if (typeof s.additionalProperties === 'object' && schemaHasDefaults(s.additionalProperties, seen)) return true;
  return schemaHasDefaults(s.items, seen);
}
