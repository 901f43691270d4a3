import { isPlainObject } from '../object/kube-object.js';
import type { StructuralSchema } from './structural-schema.js';

function goKind(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'object') return 'object';
  return typeof v;
}

function goType(s: StructuralSchema): string {
  if (s['x-kubernetes-int-or-string']) return 'intstr.IntOrString';
  switch (s.type) {
    case 'object':
      return s.additionalProperties && typeof s.additionalProperties === 'object' ? `map[string]${goType(s.additionalProperties)}` : 'struct';
    case 'array':
      return s.items ? `[]${goType(s.items)}` : '[]interface {}';
    case 'integer':
      return s.format === 'int32' ? 'int32' : 'int64';
    case 'number':
      return 'float64';
    case 'boolean':
      return 'bool';
    case 'string':
      return s.format === 'byte' ? '[]uint8' : 'string';
    default:
      return 'interface {}';
  }
}

function matches(v: unknown, s: StructuralSchema): boolean {
  if (v === null) return true; // JSON null leaves Go fields at their zero value
  if (s['x-kubernetes-int-or-string']) return typeof v === 'string' || Number.isInteger(v);
  switch (s.type) {
    case 'object':
      return isPlainObject(v);
    case 'array':
      return Array.isArray(v);
    case 'integer':
      return typeof v === 'number' && Number.isInteger(v);
    case 'number':
      return typeof v === 'number';
    case 'boolean':
      return typeof v === 'boolean';
    case 'string':
      return typeof v === 'string';
    default:
      return true;
  }
}

/**
 * Checks JSON types of a typed (built-in) object against its schema, as
 * Go's json.Unmarshal would. Returns the first mismatch as upstream words it
 * (`json: cannot unmarshal string into Go struct field ConfigMap.data of
 * type map[string]string`), or undefined when the types fit. Pure.
 */
export function findTypeError(obj: unknown, schema: StructuralSchema, kind: string): string | undefined {
  const walk = (v: unknown, s: StructuralSchema, path: string): string | undefined => {
    if (!matches(v, s)) {
      return `json: cannot unmarshal ${goKind(v)} into Go struct field ${kind}.${path} of type ${goType(s)}`;
    }
    if (s.type === 'object' && isPlainObject(v)) {
      for (const [k, child] of Object.entries(v)) {
        const cs = s.properties?.[k] ?? (typeof s.additionalProperties === 'object' ? s.additionalProperties : undefined);
        if (!cs) continue;
        const err = walk(child, cs, path ? `${path}.${k}` : k);
        if (err) return err;
      }
    } else if (s.type === 'array' && Array.isArray(v) && s.items) {
      for (const item of v) {
        const err = walk(item, s.items, path);
        if (err) return err;
      }
    }
    return undefined;
  };
  return walk(obj, schema, '');
}

function zeroValue(s: StructuralSchema): unknown {
  if (s['x-kubernetes-int-or-string']) return null;
  switch (s.type) {
    case 'object':
      return {};
    case 'string':
      return '';
    case 'integer':
    case 'number':
      return 0;
    case 'boolean':
      return false;
    default:
      return null;
  }
}

/**
 * Replaces `null` list elements with the element type's zero value, as Go's
 * json.Unmarshal leaves them in a typed slice (`[null]` in `[]OwnerReference`
 * is one empty reference), so validation sees what upstream validates.
 * Mutates `obj`; call after {@link findTypeError} found the types fitting.
 */
export function zeroNullListItems(obj: unknown, schema: StructuralSchema): void {
  if (schema.type === 'array' && Array.isArray(obj) && schema.items) {
    const items = schema.items;
    obj.forEach((v, i) => {
      if (v === null) obj[i] = zeroValue(items);
      else zeroNullListItems(v, items);
    });
    return;
  }
  if (schema.type === 'object' && isPlainObject(obj)) {
    for (const [k, v] of Object.entries(obj)) {
      const cs = schema.properties?.[k] ?? (typeof schema.additionalProperties === 'object' ? schema.additionalProperties : undefined);
      if (cs && v !== null) zeroNullListItems(v, cs);
    }
  }
}
