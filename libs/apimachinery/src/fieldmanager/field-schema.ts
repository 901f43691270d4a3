import { canonicalJson, fieldElement } from './fields-v1.js';

/**
 * The parts of a structural schema (OpenAPI v3 as Kubernetes uses it for
 * built-in kinds and CRDs) that decide how server-side apply walks,
 * merges and tracks a value. Any structural schema type fits it.
 */
export interface FieldSchema {
  type?: string;
  properties?: Record<string, FieldSchema>;
  additionalProperties?: FieldSchema | boolean;
  items?: FieldSchema;
  default?: unknown;
  nullable?: boolean;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-embedded-resource'?: boolean;
  'x-kubernetes-list-type'?: string;
  'x-kubernetes-list-map-keys'?: string[];
  'x-kubernetes-map-type'?: string;
  'x-kubernetes-patch-strategy'?: string;
  'x-kubernetes-patch-merge-key'?: string;
}

/** The type of a whole object: its schema, and optionally the schema to use for `metadata` (CRD schemas leave it out). */
export interface ObjectType {
  schema: FieldSchema;
  metadataSchema?: FieldSchema;
}

/** A value that does not fit its schema the way apply needs (an undeclared field, a list item without its key). */
export class TypedValueError extends Error {
  constructor(
    readonly path: string,
    readonly detail: string,
  ) {
    super(path ? `${path}: ${detail}` : detail);
  }
}

/** How a value is walked: a leaf, a map (struct or string-keyed map), or a list. */
export type Shape =
  | { kind: 'leaf' }
  | { kind: 'map'; schema: FieldSchema | undefined; root: ObjectType | undefined }
  | { kind: 'list'; listType: 'set' | 'map'; keys: string[]; items: FieldSchema | undefined };

/** A child field's schema, and whether it is a declared (named) struct field. `undefined` schema means "deduced from the value". */
export interface FieldInfo {
  schema: FieldSchema | undefined;
  named: boolean;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * The shape of `value` under `schema` (undefined: deduced from the value,
 * where objects are granular maps and lists are atomic). Atomic maps and
 * lists, scalars and values whose JSON type does not fit are leaves.
 */
export function shapeOf(schema: FieldSchema | undefined, value: unknown, root?: ObjectType): Shape {
  if (schema === undefined) {
    return isObject(value) ? { kind: 'map', schema: undefined, root } : { kind: 'leaf' };
  }
  if (schema['x-kubernetes-int-or-string']) return { kind: 'leaf' };
  if (Array.isArray(value)) {
    if (schema.type !== 'array' && schema.type !== undefined) return { kind: 'leaf' };
    const lt = listTypeOf(schema);
    if (lt.type === 'atomic') return { kind: 'leaf' };
    return { kind: 'list', listType: lt.type, keys: lt.keys, items: schema.items };
  }
  if (isObject(value)) {
    if (schema.type !== 'object' && schema.type !== undefined) return { kind: 'leaf' };
    if (schema['x-kubernetes-map-type'] === 'atomic') return { kind: 'leaf' };
    return { kind: 'map', schema, root };
  }
  return { kind: 'leaf' };
}

/** A list's type: the declared `x-kubernetes-list-type`, else (built-in kinds) from its patch strategy, else atomic. */
export function listTypeOf(schema: FieldSchema): { type: 'atomic' | 'set' | 'map'; keys: string[] } {
  const declared = schema['x-kubernetes-list-type'];
  if (declared === 'map') return { type: 'map', keys: schema['x-kubernetes-list-map-keys'] ?? [] };
  if (declared === 'set') return { type: 'set', keys: [] };
  if (declared === 'atomic') return { type: 'atomic', keys: [] };
  const strategies = (schema['x-kubernetes-patch-strategy'] ?? '').split(',');
  if (strategies.includes('merge')) {
    const key = schema['x-kubernetes-patch-merge-key'];
    return key ? { type: 'map', keys: [key] } : { type: 'set', keys: [] };
  }
  return { type: 'atomic', keys: [] };
}

const EMBEDDED_FIELDS = new Set(['apiVersion', 'kind', 'metadata']);
const STRING_MAP: FieldSchema = { type: 'object', additionalProperties: { type: 'string' } };
/** ObjectMeta as an embedded resource's metadata is walked: its maps and finalizers typed, the rest deduced. */
const EMBEDDED_METADATA: FieldSchema = {
  type: 'object',
  'x-kubernetes-preserve-unknown-fields': true,
  properties: {
    name: { type: 'string' },
    namespace: { type: 'string' },
    generateName: { type: 'string' },
    labels: STRING_MAP,
    annotations: STRING_MAP,
    finalizers: { type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'set' },
  },
};

/** The schema of field `name` of a map shape; undefined when a closed struct does not declare it. */
export function fieldOf(shape: Extract<Shape, { kind: 'map' }>, name: string): FieldInfo | undefined {
  const s = shape.schema;
  if (s === undefined) return { schema: undefined, named: false };
  if (shape.root && name === 'metadata' && shape.root.metadataSchema) return { schema: shape.root.metadataSchema, named: true };
  // An embedded resource declares apiVersion, kind and metadata implicitly.
  if (s['x-kubernetes-embedded-resource'] && !s.properties?.[name] && EMBEDDED_FIELDS.has(name)) {
    return { schema: name === 'metadata' ? EMBEDDED_METADATA : { type: 'string' }, named: true };
  }
  if (s.properties && Object.prototype.hasOwnProperty.call(s.properties, name)) return { schema: s.properties[name], named: true };
  if (typeof s.additionalProperties === 'object') return { schema: s.additionalProperties, named: false };
  if (s.additionalProperties === true || s['x-kubernetes-preserve-unknown-fields'] || !s.properties) return { schema: undefined, named: false };
  return undefined;
}

/** The path element of a list item: `k:{...}` for map lists, `v:...` for sets. Throws TypedValueError when a key is missing. */
export function itemElement(shape: Extract<Shape, { kind: 'list' }>, item: unknown, at: string): string {
  if (shape.listType === 'set') return `v:${canonicalJson(item)}`;
  if (!isObject(item)) throw new TypedValueError(at, 'associative list with keys may not have non-map elements');
  const key: Record<string, unknown> = {};
  for (const k of shape.keys) {
    let v = item[k];
    if (v === undefined || v === null) v = shape.items?.properties?.[k]?.default;
    if (v === undefined || v === null) {
      throw new TypedValueError(at, `associative list with keys has an element that omits key field ${JSON.stringify(k)} (and doesn't have default value)`);
    }
    key[k] = v;
  }
  return `k:${canonicalJson(key)}`;
}

/** The element of map key `name`. */
export const mapElement = fieldElement;
