import { type FieldPath, PathSet, sortedElements } from './path-set.js';

/** Thrown when a FieldsV1 document cannot be read; the message says where. */
export class FieldsV1Error extends Error {}

const MAX_DEPTH = 256;

/**
 * Serialises a set as FieldsV1: one JSON member per path element, `{}` for
 * a member without children, and `".": {}` where an element is both a
 * member and the parent of members. Elements are in upstream's order.
 */
export function encodeFieldsV1(set: PathSet): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const pe of sortedElements(set)) {
    const child = set.children.get(pe);
    const inner = child && !child.empty() ? encodeFieldsV1(child) : {};
    const value = set.members.has(pe) && Object.keys(inner).length > 0 ? { '.': {}, ...inner } : inner;
    if (!set.members.has(pe) && Object.keys(inner).length === 0) continue;
    define(out, pe, value);
  }
  return out;
}

function define(o: Record<string, unknown>, key: string, value: unknown): void {
  // Plain assignment is fast; only `__proto__` needs defineProperty (assignment would swap the prototype).
  if (key === '__proto__') Object.defineProperty(o, key, { value, writable: true, enumerable: true, configurable: true });
  else o[key] = value;
}

/** Reads a FieldsV1 document into a set; throws FieldsV1Error on anything malformed. */
export function decodeFieldsV1(doc: unknown): PathSet {
  const set = new PathSet();
  readInto(set, doc, [], 0);
  return set;
}

function readInto(parent: PathSet, doc: unknown, at: string[], depth: number): void {
  if (depth > MAX_DEPTH) throw new FieldsV1Error('FieldsV1 is nested too deeply');
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) {
    throw new FieldsV1Error(`expected an object at ${at.join('') || 'the root'}`);
  }
  for (const [key, value] of Object.entries(doc as Record<string, unknown>)) {
    if (key === '.') continue;
    const pe = canonicalElement(key);
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      throw new FieldsV1Error(`expected an object for ${key}`);
    }
    const inner = value as Record<string, unknown>;
    const keys = Object.keys(inner);
    if (keys.length === 0 || Object.prototype.hasOwnProperty.call(inner, '.')) parent.members.add(pe);
    if (keys.some((k) => k !== '.')) readInto(parent.child(pe), inner, [...at, pe], depth + 1);
  }
}

/** The canonical spelling of a FieldsV1 key (key and value JSON re-encoded with sorted keys); throws on an unknown prefix. */
export function canonicalElement(key: string): string {
  const prefix = key.slice(0, 2);
  const rest = key.slice(2);
  switch (prefix) {
    case 'f:':
      return key;
    case 'i:':
      if (!/^(0|[1-9][0-9]{0,9})$/.test(rest)) throw new FieldsV1Error(`invalid index ${JSON.stringify(key)}`);
      return key;
    case 'k:':
    case 'v:': {
      let parsed: unknown;
      try {
        parsed = JSON.parse(rest);
      } catch {
        throw new FieldsV1Error(`invalid JSON in ${JSON.stringify(key)}`);
      }
      if (prefix === 'k:' && (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))) {
        throw new FieldsV1Error(`invalid key ${JSON.stringify(key)}`);
      }
      return prefix + canonicalJson(parsed);
    }
    default:
      throw new FieldsV1Error(`unexpected path element ${JSON.stringify(key)}`);
  }
}

/** JSON with object keys sorted (Go's encoding of maps), compact. */
export function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    const keys = Object.keys(v).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson((v as Record<string, unknown>)[k])}`).join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

/** A field name's path element. */
export function fieldElement(name: string): string {
  return `f:${name}`;
}

/**
 * A path as upstream prints it in conflicts: `.spec.containers[name="app"].image`,
 * `[="value"]` for set items, `[3]` for indexes.
 */
export function pathString(path: FieldPath): string {
  return path.map(elementString).join('');
}

function elementString(pe: string): string {
  const rest = pe.slice(2);
  switch (pe[0]) {
    case 'f':
      return `.${rest}`;
    case 'i':
      return `[${rest}]`;
    case 'k': {
      const key = JSON.parse(rest) as Record<string, unknown>;
      return `[${Object.keys(key).sort().map((k) => `${k}=${valueString(key[k])}`).join(',')}]`;
    }
    default:
      return `[=${valueString(JSON.parse(rest))}]`;
  }
}

function valueString(v: unknown): string {
  if (v === null) return 'null';
  if (typeof v === 'string') return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(valueString).join(',')}]`;
  if (typeof v === 'object') {
    const o = v as Record<string, unknown>;
    return `{${Object.keys(o).sort().map((k) => `${k}=${valueString(o[k])}`).join(',')}}`;
  }
  return String(v);
}
