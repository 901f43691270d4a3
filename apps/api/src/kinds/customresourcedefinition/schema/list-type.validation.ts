import { type FieldError, fieldErrors } from '@plinth/apimachinery';
import { isPlainObject } from '@plinth/apimachinery';
import type { StructuralSchema } from '@plinth/apimachinery';

/**
 * The invariants of `x-kubernetes-list-type: set` (unique items) and
 * `map` (unique `x-kubernetes-list-map-keys` tuples, object items), as
 * apiextensions-apiserver's listtype.ValidateListSetsAndMaps reports them:
 * one `Duplicate value` per repeated item (its second occurrence), at
 * `path[i]`. Map keys in paths use `[key]`. Pure.
 */

function keyOf(v: unknown): string {
  return JSON.stringify(v, (_k, x) => (isPlainObject(x) ? Object.fromEntries(Object.entries(x).sort(([a], [b]) => (a < b ? -1 : 1))) : x));
}

function duplicates(keys: string[]): number[] {
  const seen = new Map<string, number>();
  const out: number[] = [];
  keys.forEach((k, i) => {
    const n = seen.get(k) ?? 0;
    if (n === 1) out.push(i);
    seen.set(k, n + 1);
  });
  return out;
}

function validateArray(path: string, s: StructuralSchema, arr: unknown[], errs: FieldError[]): void {
  const listType = s['x-kubernetes-list-type'];
  if (listType === 'set') {
    for (const i of duplicates(arr.map(keyOf))) errs.push(fieldErrors.duplicate(`${path}[${i}]`, arr[i]));
  } else if (listType === 'map') {
    const bad = arr.findIndex((x) => x !== null && !isPlainObject(x));
    if (bad >= 0) {
      errs.push(fieldErrors.invalid(`${path}[${bad}]`, arr[bad], 'must be an object for an array of list-type map'));
    } else {
      const keyFields = s['x-kubernetes-list-map-keys'] ?? [];
      const keys = arr.map((x) => {
        const key: Record<string, unknown> = {};
        for (const f of keyFields) if (isPlainObject(x) && Object.hasOwn(x, f)) key[f] = x[f];
        return key;
      });
      for (const i of duplicates(keys.map(keyOf))) errs.push(fieldErrors.duplicate(`${path}[${i}]`, keys[i]));
    }
  }
  if (s.items) arr.forEach((x, i) => walk(`${path}[${i}]`, s.items!, x, errs));
}

function walk(path: string, s: StructuralSchema, v: unknown, errs: FieldError[]): void {
  if (Array.isArray(v)) validateArray(path, s, v, errs);
  else if (isPlainObject(v)) {
    for (const [k, child] of Object.entries(v)) {
      const prop = s.properties && Object.hasOwn(s.properties, k) ? s.properties[k] : undefined;
      if (prop) walk(path ? `${path}.${k}` : k, prop, child, errs);
      else if (typeof s.additionalProperties === 'object') walk(`${path}[${k}]`, s.additionalProperties, child, errs);
    }
  }
}

/** Duplicate items of set and map lists anywhere in `obj`. */
export function validateListSetsAndMaps(obj: unknown, schema: StructuralSchema): FieldError[] {
  const errs: FieldError[] = [];
  walk('', schema, obj, errs);
  return errs;
}
