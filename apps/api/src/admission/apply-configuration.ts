import type { StructuralSchema } from '@plinth/apimachinery';

/**
 * Server-side-apply merge of a MutatingAdmissionPolicy's ApplyConfiguration
 * into an object, guided by the kind's structural schema as
 * structured-merge-diff is: maps merge field by field (atomic maps are
 * replaced), `x-kubernetes-list-type: map` lists merge items by their
 * `x-kubernetes-list-map-keys`, `set` lists gain missing items, other lists
 * are atomic and replaced. Null values in the configuration leave fields
 * unchanged.
 */

type Json = Record<string, unknown>;

function isPlainObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function childSchema(schema: StructuralSchema | undefined, key: string): StructuralSchema | undefined {
  if (!schema) return undefined;
  const prop = schema.properties?.[key];
  if (prop) return prop;
  return typeof schema.additionalProperties === 'object' ? schema.additionalProperties : undefined;
}

function sameKeys(a: unknown, b: unknown, keys: string[]): boolean {
  return isPlainObject(a) && isPlainObject(b) && keys.every((k) => JSON.stringify(a[k]) === JSON.stringify(b[k]));
}

function mergeList(schema: StructuralSchema | undefined, target: unknown, patch: unknown[]): unknown[] {
  const listType = schema?.['x-kubernetes-list-type'];
  if (!Array.isArray(target) || (listType !== 'map' && listType !== 'set')) return patch;
  const out = [...target];
  if (listType === 'set') {
    for (const item of patch) if (!out.some((x) => JSON.stringify(x) === JSON.stringify(item))) out.push(item);
    return out;
  }
  const keys = schema?.['x-kubernetes-list-map-keys'] ?? [];
  for (const item of patch) {
    const i = out.findIndex((x) => sameKeys(x, item, keys));
    if (i < 0) out.push(item);
    else out[i] = mergeValue(schema?.items, out[i], item);
  }
  return out;
}

function mergeValue(schema: StructuralSchema | undefined, target: unknown, patch: unknown): unknown {
  if (patch === null) return target;
  if (Array.isArray(patch)) return mergeList(schema, target, patch);
  if (!isPlainObject(patch)) return patch;
  if (!isPlainObject(target) || schema?.['x-kubernetes-map-type'] === 'atomic') return patch;
  const out: Json = { ...target };
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) continue;
    out[k] = mergeValue(childSchema(schema, k), target[k], v);
  }
  return out;
}

/** `object` with `patch` applied. Does not mutate its inputs. */
export function mergeApplyConfiguration(schema: StructuralSchema | undefined, object: Json, patch: Json): Json {
  return mergeValue(schema, object, patch) as Json;
}
