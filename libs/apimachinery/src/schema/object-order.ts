import type { StructuralSchema } from './structural-schema.js';
import { isPlainObject } from '../object/kube-object.js';

// metav1.ObjectMeta's Go field order, which its JSON follows.
const META_ORDER = [
  'name', 'generateName', 'namespace', 'selfLink', 'uid', 'resourceVersion', 'generation', 'creationTimestamp',
  'deletionTimestamp', 'deletionGracePeriodSeconds', 'labels', 'annotations', 'ownerReferences', 'finalizers', 'managedFields',
];

function ordered(obj: Record<string, unknown>, order: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of order) if (k in obj) out[k] = obj[k];
  for (const k of Object.keys(obj)) if (!(k in out)) out[k] = obj[k];
  return out;
}

/**
 * Returns a copy of `obj` with its top-level keys in kube-apiserver's order
 * (kind, apiVersion, metadata, then the schema's field order) and metadata
 * in ObjectMeta's order. PostgreSQL's jsonb does not keep key order, and
 * clients print what they receive. Shallow: nested values are shared.
 */
export function inServedOrder(obj: Record<string, unknown>, schema: StructuralSchema): Record<string, unknown> {
  const top = ordered(obj, ['kind', 'apiVersion', 'metadata', ...Object.keys(schema.properties ?? {})]);
  if (isPlainObject(top.metadata)) top.metadata = ordered(top.metadata, META_ORDER);
  return top;
}
