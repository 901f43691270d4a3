import { CEL_MAX_REQUEST_BYTES, type DeclType } from '@plinth/cel';
import type { StructuralSchema } from '@plinth/apimachinery';
import { escapeCelName } from './cel-schema-values.js';

/**
 * The CEL type of a CRD schema node with its size bounds, as
 * apiserver's common.SchemaDeclType computes it: strings hold maxLength
 * × 4 bytes (a code point may take 4), or their longest enum value, or
 * what fits in a 3 MiB request; lists and maps hold maxItems /
 * maxProperties, or as many of their smallest serialized element as fit
 * in a request; objects expose their properties under escaped names, and a
 * resource root (or embedded resource) apiVersion, kind and
 * metadata.name/generateName (253 and 252 characters at most). Pure.
 */

const REQUEST = CEL_MAX_REQUEST_BYTES;
/** apiserver's JSON sizes of formatted strings (pkg/cel/limits.go). */
const MAX_DURATION_JSON = 32;
const MAX_DATETIME_JSON = 32;
const MIN_DURATION_JSON = 3;
const JSON_DATE = 12;
const MIN_DATETIME_JSON = 21;
const MIN_STRING = 2;
const MIN_BOOL = 4;
const MIN_NUMBER = 1;
/** DNS-1123 subdomain: what metadata.name may hold; generateName leaves at least one character for the suffix. */
const NAME_MAX_LENGTH = 253;

function decl(kind: DeclType['kind'], minSerializedSize: number, maxElements = 0, extra: Partial<DeclType> = {}): DeclType {
  return { kind, minSerializedSize, maxElements, ...extra };
}

const nonNegative = (n: number): number => Math.max(0, n);

function maxStringLength(s: StructuralSchema): number {
  if (s['x-kubernetes-int-or-string']) return REQUEST - 2;
  switch (s.format) {
    case 'duration':
      return MAX_DURATION_JSON;
    case 'date':
      return JSON_DATE;
    case 'date-time':
      return MAX_DATETIME_JSON;
    default:
      return REQUEST - 2;
  }
}

function stringDecl(s: StructuralSchema): DeclType {
  switch (s.format) {
    case 'byte':
      return decl('bytes', MIN_STRING, s.maxLength !== undefined ? nonNegative(s.maxLength) : maxStringLength(s));
    case 'duration':
      return decl('duration', MIN_DURATION_JSON, maxStringLength(s));
    case 'date':
      return decl('timestamp', JSON_DATE, maxStringLength(s));
    case 'date-time':
      return decl('timestamp', MIN_DATETIME_JSON, maxStringLength(s));
  }
  let max: number;
  if (s.maxLength !== undefined) max = nonNegative(s.maxLength) * 4;
  else if (s.enum && s.enum.length > 0) max = Math.max(0, ...s.enum.map((v) => (typeof v === 'string' ? Buffer.byteLength(v) : 0)));
  else max = maxStringLength(s);
  return decl('string', MIN_STRING, max);
}

/** apiextensions' WithTypeAndObjectMeta: a resource root always has apiVersion, kind and metadata.name/generateName. */
function withTypeAndObjectMeta(s: StructuralSchema): StructuralSchema {
  const p = s.properties ?? {};
  const meta = p.metadata?.properties;
  if (p.kind?.type === 'string' && p.apiVersion?.type === 'string' && p.metadata?.type === 'object' && meta?.name?.type === 'string' && meta.generateName?.type === 'string') return s;
  const capped = (existing: StructuralSchema | undefined, max: number): StructuralSchema => ({
    type: 'string',
    maxLength: existing?.maxLength !== undefined && existing.maxLength < max ? existing.maxLength : max,
  });
  return {
    ...s,
    properties: {
      ...p,
      kind: { type: 'string' },
      apiVersion: { type: 'string' },
      metadata: { type: 'object', properties: { name: capped(meta?.name, NAME_MAX_LENGTH), generateName: capped(meta?.generateName, NAME_MAX_LENGTH - 1) } },
    },
  };
}

function objectDecl(s: StructuralSchema, depth: number): DeclType | undefined {
  if (typeof s.additionalProperties === 'object') {
    const values = schemaDeclType(s.additionalProperties, s.additionalProperties['x-kubernetes-embedded-resource'] === true, depth + 1);
    if (!values) return undefined;
    const max = s.maxProperties !== undefined ? nonNegative(s.maxProperties) : Math.floor((REQUEST - 2) / (values.minSerializedSize + 6));
    return decl('map', 2, max, { key: decl('string', MIN_STRING), elem: values });
  }
  const required = new Set(s.required ?? []);
  const fields = new Map<string, DeclType>();
  let minSize = 2;
  for (const [name, prop] of Object.entries(s.properties ?? {})) {
    const t = schemaDeclType(prop, prop['x-kubernetes-embedded-resource'] === true, depth + 1);
    if (!t) continue;
    const escaped = escapeCelName(name);
    if (escaped !== undefined) fields.set(escaped, t);
    if (required.has(name) && prop.default === undefined) minSize += Buffer.byteLength(name) + t.minSerializedSize + 4;
  }
  return decl('object', minSize, 0, { fields });
}

/**
 * The declared CEL type of schema node `s` (upstream SchemaDeclType);
 * `resourceRoot` for the root of a custom resource or of an embedded
 * resource. Undefined for nodes CEL cannot see (an array without items, a
 * node without a type that is not int-or-string). Pure.
 */
export function schemaDeclType(s: StructuralSchema | undefined, resourceRoot: boolean, depth = 0): DeclType | undefined {
  if (!s || depth > 64) return undefined;
  // A schema with rules at many levels asks for the same subtrees again (as upstream reuses its parents' types).
  const cache = resourceRoot ? rootCache : nodeCache;
  const hit = cache.get(s);
  if (hit !== undefined) return hit ?? undefined;
  const t = computeDeclType(s, resourceRoot, depth);
  cache.set(s, t ?? null);
  return t;
}

/** Declared types by schema node (schemas are immutable once parsed; entries go with their schema). */
const nodeCache = new WeakMap<StructuralSchema, DeclType | null>();
const rootCache = new WeakMap<StructuralSchema, DeclType | null>();

function computeDeclType(s: StructuralSchema, resourceRoot: boolean, depth: number): DeclType | undefined {
  if (s['x-kubernetes-int-or-string']) return decl('dyn', 1, s.maxLength !== undefined ? nonNegative(s.maxLength) * 4 : maxStringLength(s));
  const node = resourceRoot ? withTypeAndObjectMeta(s) : s;
  switch (node.type) {
    case 'array': {
      if (!node.items) return undefined;
      const items = schemaDeclType(node.items, node.items['x-kubernetes-embedded-resource'] === true, depth + 1);
      if (!items) return undefined;
      const max = node.maxItems !== undefined ? nonNegative(node.maxItems) : Math.floor((REQUEST - 2) / (items.minSerializedSize + 1));
      return decl('list', 2, max, { elem: items });
    }
    case 'object':
      return objectDecl(node, depth);
    case 'string':
      return stringDecl(node);
    case 'boolean':
      return decl('bool', MIN_BOOL);
    case 'number':
      return decl('double', MIN_NUMBER);
    case 'integer':
      return decl('int', MIN_NUMBER);
    default:
      return undefined;
  }
}
