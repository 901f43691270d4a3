import { isDeepStrictEqual } from 'node:util';
import { pathString } from './fields-v1.js';
import { type FieldSchema, fieldOf, itemElement, mapElement, type ObjectType, type Shape, shapeOf, TypedValueError } from './field-schema.js';
import { PathSet } from './path-set.js';
import { cloneJsonValue } from '../object/json-clone.js';

/**
 * Schema-aware operations on whole objects, with structured-merge-diff's
 * semantics: the set of fields a value sets, the comparison of two values,
 * the merge of an applied configuration into a live object, and removal
 * of paths. Objects are plain JSON; nothing here mutates its inputs
 * unless it says so.
 */

type Json = Record<string, unknown>;

function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function isEmptyish(v: unknown): boolean {
  return v === null || v === undefined || (Array.isArray(v) ? v.length === 0 : isObject(v) && Object.keys(v).length === 0);
}

/** Items of a list shape keyed by path element (first occurrence wins), in list order. */
function indexItems(shape: Extract<Shape, { kind: 'list' }>, list: unknown[], at: string[], strict: boolean): Map<string, unknown> {
  const out = new Map<string, unknown>();
  for (const item of list) {
    const pe = itemElement(shape, item, pathString(at));
    if (out.has(pe)) {
      if (strict) throw new TypedValueError(pathString(at), `duplicate entries for key ${pathString([pe])}`);
      continue;
    }
    out.set(pe, item);
  }
  return out;
}

/**
 * The fields `obj` sets: every scalar, atomic value and list item, map
 * entries of string-keyed maps, and empty or null struct fields. With
 * `strict`, an undeclared field or a duplicate list item throws
 * TypedValueError (upstream: "field not declared in schema").
 */
export function toFieldSet(obj: unknown, type: ObjectType, strict = false): PathSet {
  const set = new PathSet();
  visitSet(obj, type.schema, type, [], set, strict);
  return set;
}

function visitSet(value: unknown, schema: FieldSchema | undefined, root: ObjectType | undefined, path: string[], set: PathSet, strict: boolean): void {
  const shape = shapeOf(schema, value, root);
  if (shape.kind === 'leaf') {
    set.insert(path);
    return;
  }
  if (shape.kind === 'list') {
    for (const [pe, item] of indexItems(shape, value as unknown[], path, strict)) {
      const p = [...path, pe];
      visitSet(item, shape.items, undefined, p, set, strict);
      set.insert(p);
    }
    return;
  }
  for (const [key, child] of Object.entries(value as Json)) {
    const info = fieldOf(shape, key);
    if (!info) {
      if (strict) throw new TypedValueError(pathString([...path, mapElement(key)]), 'field not declared in schema');
      continue;
    }
    const p = [...path, mapElement(key)];
    visitSet(child, info.schema, undefined, p, set, strict);
    if (child === null || (isObject(child) && Object.keys(child).length === 0) || !info.named) set.insert(p);
  }
}

/** What changed between two values: paths added, removed and modified (leaves whose value differs). */
export interface Comparison {
  added: PathSet;
  removed: PathSet;
  modified: PathSet;
}

/** Compares `lhs` (before) with `rhs` (after) under `type`. Inputs are not mutated. */
export function compareObjects(lhs: unknown, rhs: unknown, type: ObjectType): Comparison {
  const c: Comparison = { added: new PathSet(), removed: new PathSet(), modified: new PathSet() };
  compareNode(lhs, rhs, type.schema, type, [], c);
  return c;
}

function compareNode(l: unknown, r: unknown, schema: FieldSchema | undefined, root: ObjectType | undefined, path: string[], c: Comparison): void {
  const ls = l === undefined ? undefined : shapeOf(schema, l, root);
  const rs = r === undefined ? undefined : shapeOf(schema, r, root);
  const shape = rs ?? ls!;
  const leaf =
    (ls && rs && ls.kind !== rs.kind) || shape.kind === 'leaf' || (isEmptyish(l) && isEmptyish(r) && (l !== undefined || r !== undefined));
  if (leaf) {
    if (l === undefined) c.added.insert(path);
    else if (r === undefined) c.removed.insert(path);
    else if (!isDeepStrictEqual(l, r)) c.modified.insert(path);
    return;
  }
  if (shape.kind === 'list') {
    const li = Array.isArray(l) ? indexItems(shape, l, path, false) : new Map<string, unknown>();
    const ri = Array.isArray(r) ? indexItems(shape, r, path, false) : new Map<string, unknown>();
    for (const [pe, item] of li) compareNode(item, ri.get(pe), shape.items, undefined, [...path, pe], c);
    for (const [pe, item] of ri) if (!li.has(pe)) compareNode(undefined, item, shape.items, undefined, [...path, pe], c);
  } else if (shape.kind === 'map') {
    const lo = isObject(l) ? l : {};
    const ro = isObject(r) ? r : {};
    const keys = new Set([...Object.keys(lo), ...Object.keys(ro)]);
    for (const key of keys) {
      const info = fieldOf(shape, key) ?? { schema: undefined, named: false };
      compareNode(lo[key], ro[key], info.schema, undefined, [...path, mapElement(key)], c);
    }
  }
  if (path.length === 0) return;
  if (l === undefined) c.added.insert(path);
  else if (r === undefined) c.removed.insert(path);
}

/**
 * Merges an applied configuration into a live object: maps merge by key,
 * map lists by their keys and sets by value (live order kept, shared
 * items in the configuration's order, new items where the configuration
 * puts them), atomic values and scalars are replaced. Returns a new value.
 */
export function mergeObjects(live: unknown, config: unknown, type: ObjectType): unknown {
  return mergeNode(live, config, type.schema, type);
}

/** A deep copy of a JSON value; scalars are returned as they are. */
function copy<T>(v: T): T {
  return cloneJsonValue(v);
}

function mergeNode(l: unknown, r: unknown, schema: FieldSchema | undefined, root: ObjectType | undefined): unknown {
  if (r === undefined) return copy(l);
  if (l === undefined || l === null || r === null) return copy(r);
  const ls = shapeOf(schema, l, root);
  const rs = shapeOf(schema, r, root);
  if (ls.kind !== rs.kind || rs.kind === 'leaf') return copy(r);
  if (rs.kind === 'map') {
    const out: Json = {};
    const lo = l as Json;
    const ro = r as Json;
    for (const key of new Set([...Object.keys(lo), ...Object.keys(ro)])) {
      const info = fieldOf(rs, key) ?? { schema: undefined, named: false };
      define(out, key, mergeNode(lo[key], ro[key], info.schema, undefined));
    }
    return out;
  }
  return mergeList(rs, l as unknown[], r as unknown[]);
}

function define(o: Json, key: string, value: unknown): void {
  // Plain assignment is fast; only `__proto__` needs defineProperty (assignment would swap the prototype).
  if (key === '__proto__') Object.defineProperty(o, key, { value, writable: true, enumerable: true, configurable: true });
  else o[key] = value;
}

/**
 * Ordered merge of two associative lists: items only in `l` keep their
 * place; items of `r` are emitted in `r`'s order, each shared item when the
 * walk over `l` reaches it in that order.
 */
function mergeList(shape: Extract<Shape, { kind: 'list' }>, l: unknown[], r: unknown[]): unknown[] {
  const lKeys = l.map((item) => itemElement(shape, item, ''));
  const rKeys = r.map((item) => itemElement(shape, item, ''));
  const lMap = new Map<string, unknown>();
  lKeys.forEach((k, i) => lMap.has(k) || lMap.set(k, l[i]));
  const rSet = new Set(rKeys);
  const shared = rKeys.filter((k) => lMap.has(k));
  const out: unknown[] = [];
  const emitted = new Set<string>();
  let si = 0;
  let li = 0;
  let ri = 0;
  while (li < l.length || ri < r.length) {
    if (li < l.length) {
      const k = lKeys[li];
      if (!rSet.has(k)) {
        if (!emitted.has(k)) out.push(copy(l[li]));
        emitted.add(k);
        li++;
        continue;
      }
      if (emitted.has(k) || (si < shared.length && k !== shared[si]) || ri >= r.length) {
        li++;
        continue;
      }
    }
    const k = rKeys[ri];
    if (!emitted.has(k)) out.push(mergeNode(lMap.get(k), r[ri], shape.items, undefined));
    emitted.add(k);
    if (si < shared.length && shared[si] === k) si++;
    ri++;
  }
  return out;
}

/** Removes from `obj` (in place) every path that is a member of `set`, with everything under it. */
export function removePaths(obj: unknown, set: PathSet, type: ObjectType): void {
  removeNode(obj, set, type.schema, type);
}

function removeNode(value: unknown, set: PathSet, schema: FieldSchema | undefined, root: ObjectType | undefined): void {
  const shape = shapeOf(schema, value, root);
  if (shape.kind === 'map') {
    const o = value as Json;
    for (const key of Object.keys(o)) {
      const pe = mapElement(key);
      if (set.members.has(pe)) delete o[key];
      else if (set.children.has(pe)) removeNode(o[key], set.children.get(pe)!, (fieldOf(shape, key) ?? { schema: undefined }).schema, undefined);
    }
  } else if (shape.kind === 'list') {
    const list = value as unknown[];
    const kept: unknown[] = [];
    for (const item of list) {
      const pe = itemElement(shape, item, '');
      if (set.members.has(pe)) continue;
      if (set.children.has(pe)) removeNode(item, set.children.get(pe)!, shape.items, undefined);
      kept.push(item);
    }
    list.splice(0, list.length, ...kept);
  }
}

/**
 * A copy of `set` where every declared struct field that has members
 * below it is a member too (upstream's EnsureNamedFieldsAreMembers), so
 * that a struct someone still owns parts of is not removed whole.
 */
export function withNamedFieldsAsMembers(set: PathSet, type: ObjectType): PathSet {
  const out = set.clone();
  markNamed(out, type.schema, type);
  return out;
}

function markNamed(set: PathSet, schema: FieldSchema | undefined, root: ObjectType | undefined): void {
  for (const [pe, child] of set.children) {
    let childSchema: FieldSchema | undefined;
    if (pe.startsWith('f:')) {
      const shape = schema ? ({ kind: 'map', schema, root } as const) : undefined;
      const info = shape ? fieldOf(shape, pe.slice(2)) : undefined;
      if (info?.named && !child.empty()) set.members.add(pe);
      childSchema = info?.schema;
    } else {
      childSchema = schema?.items;
    }
    markNamed(child, childSchema, undefined);
  }
}

/** Removes null members of maps whose schema does not say `nullable` (Go's typed decoding drops them). Mutates `obj`. */
export function dropNulls(obj: unknown, type: ObjectType): void {
  dropNullsNode(obj, type.schema, type);
}

function dropNullsNode(value: unknown, schema: FieldSchema | undefined, root: ObjectType | undefined): void {
  if (Array.isArray(value)) {
    for (const item of value) dropNullsNode(item, schema?.items, undefined);
    return;
  }
  if (!isObject(value)) return;
  const shape = { kind: 'map', schema, root } as const;
  for (const key of Object.keys(value)) {
    const info = schema ? fieldOf(shape, key) : undefined;
    if (value[key] === null && !info?.schema?.nullable) delete value[key];
    else dropNullsNode(value[key], info?.schema, undefined);
  }
}
