import type { StructuralSchema } from '../schema/structural-schema.js';

/** Options of findUnknownFields and pruneUnknownFields. */
export interface UnknownFieldOptions {
  /**
   * Schema of ObjectMeta, used for `metadata` at the root and in embedded resources. Without it,
   * root `metadata` is checked against the schema's own `properties.metadata` by findUnknownFields
   * (built-in schemas declare it in full) and embedded `metadata` is not looked into.
   */
  objectMeta?: StructuralSchema;
}

/** How one key of an object is treated, shared by the unknown-field walk and pruning. */
export type FieldRule =
  | { kind: 'schema'; schema: StructuralSchema }
  | { kind: 'keep' }
  | { kind: 'metadata' }
  | { kind: 'unknown' };

const KEEP: FieldRule = { kind: 'keep' };
const METADATA: FieldRule = { kind: 'metadata' };
const UNKNOWN: FieldRule = { kind: 'unknown' };

/**
 * Classifies `key` of an object governed by `schema` following upstream pruning: in a resource
 * (the root or an x-kubernetes-embedded-resource) apiVersion/kind are kept and metadata is ObjectMeta;
 * otherwise a declared property, then an additionalProperties schema, applies; `additionalProperties:
 * true` and x-kubernetes-preserve-unknown-fields (`preserve`, possibly inherited) keep the key as is;
 * anything else is unknown. A missing schema declares nothing. Pure.
 */
export function fieldRule(schema: StructuralSchema | undefined, key: string, resource: boolean, preserve: boolean): FieldRule {
  if (resource) {
    if (key === 'apiVersion' || key === 'kind') return KEEP;
    if (key === 'metadata') return METADATA;
  }
  const props = schema?.properties;
  if (props && Object.hasOwn(props, key)) return { kind: 'schema', schema: props[key] };
  const additional = schema?.additionalProperties;
  if (typeof additional === 'object' && additional !== null) return { kind: 'schema', schema: additional };
  return additional === true || preserve ? KEEP : UNKNOWN;
}

/** True when `schema` has x-kubernetes-preserve-unknown-fields: true. */
export function preservesUnknown(schema: StructuralSchema | undefined): boolean {
  return schema?.['x-kubernetes-preserve-unknown-fields'] === true;
}

/**
 * Lists the fields of `obj` that `schema` does not declare, as the typed decoder of built-in kinds
 * reports them: `spec.unknownField`, `metadata.unknownMeta`, `spec.containers[0].foo`, in object-key
 * order. Semantics follow CRD pruning (see fieldRule); subtrees under
 * x-kubernetes-preserve-unknown-fields or `additionalProperties: true` are not reported, and an object
 * or array where the schema expects another type is skipped (the type error is validation's to report).
 * Returns [] when nothing is unknown. Does not mutate its inputs.
 */
export function findUnknownFields(obj: unknown, schema: StructuralSchema, options: UnknownFieldOptions = {}): string[] {
  const found: string[] = [];
  const walk = (value: unknown, s: StructuralSchema | undefined, path: string, inheritedPreserve: boolean, root: boolean): void => {
    const preserve = inheritedPreserve || preservesUnknown(s);
    if (preserve && !s) return;
    if (Array.isArray(value)) {
      if (!expects(s, 'array')) return;
      for (let i = 0; i < value.length; i++) walk(value[i], s?.items, `${path}[${i}]`, preserve, false);
      return;
    }
    if (typeof value !== 'object' || value === null || !expects(s, 'object')) return;
    const resource = root || s?.['x-kubernetes-embedded-resource'] === true;
    for (const key of Object.keys(value)) {
      const rule = fieldRule(s, key, resource, preserve);
      const child = path === '' ? key : `${path}.${key}`;
      const v = (value as Record<string, unknown>)[key];
      if (rule.kind === 'unknown') found.push(child);
      else if (rule.kind === 'schema') walk(v, rule.schema, child, false, false);
      else if (rule.kind === 'metadata') {
        const meta = options.objectMeta ?? (root ? ownProperty(s, 'metadata') : undefined);
        if (meta) walk(v, meta, child, false, false);
      }
    }
  };
  walk(obj, schema, '', false, true);
  return found;
}

function ownProperty(schema: StructuralSchema | undefined, key: string): StructuralSchema | undefined {
  const props = schema?.properties;
  return props && Object.hasOwn(props, key) ? props[key] : undefined;
}

/** Whether a value of JSON type `kind` can be meant by `schema`; untyped schemas accept anything. */
function expects(schema: StructuralSchema | undefined, kind: 'object' | 'array'): boolean {
  if (!schema) return true;
  if (schema['x-kubernetes-int-or-string'] === true) return false;
  return schema.type === undefined || schema.type === kind;
}
