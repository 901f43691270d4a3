import type { StructuralSchema } from '../schema/structural-schema.js';
import { PatchError, goFormat, goJsonKind, goTypeName } from './patch-error.js';

type JsonMap = Record<string, unknown>;
type Schema = StructuralSchema | undefined;

const DIRECTIVE = '$patch';
const RETAIN_KEYS = '$retainKeys';
const DELETE_PRIMITIVES = '$deleteFromPrimitiveList';
const SET_ORDER = '$setElementOrder';
const MAP_TYPE = 'map[string]interface {}';
const SLICE_TYPE = '[]interface {}';

// Upstream's mergepatch sentinel errors that the PATCH handler turns into 400 BadRequest.
const ERR_PRIMITIVE_LIST = 'invalid patch format of primitive list';
const ERR_RETAIN_KEYS = 'invalid patch format of retainKeys';
const ERR_SET_ORDER = 'invalid patch format of setElementOrder list';

/** A field's patch metadata, as `patchStrategy`/`patchMergeKey` struct tags give it upstream. */
interface FieldMeta {
  schema: Schema;
  strategy: string;
  mergeKey: string;
}

function isObject(v: unknown): v is JsonMap {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function hasOwn(o: object, key: string): boolean {
  return Object.prototype.hasOwnProperty.call(o, key);
}

/** Creates or sets an own member; plain assignment of a new `__proto__` key would swap the prototype instead. */
function define(o: JsonMap, key: string, value: unknown): void {
  Object.defineProperty(o, key, { value, writable: true, enumerable: true, configurable: true });
}

/**
 * Applies a Kubernetes strategic merge patch the way kube-apiserver does
 * (apimachinery strategicpatch, server-side options): per-field
 * `x-kubernetes-patch-strategy` (merge / replace / retainKeys combinations)
 * and `x-kubernetes-patch-merge-key` from `schema`, plus the directives
 * `$patch` (replace, delete; merge is rejected as upstream does),
 * `$retainKeys`, `$setElementOrder/<f>` and `$deleteFromPrimitiveList/<f>`.
 * Where the schema says nothing, maps merge and lists are replaced.
 * A null `patch` is a no-op. Neither input is mutated.
 * Throws PatchError: 400 for a non-object body or a malformed directive,
 * 422 for lists of lists, 500 (no reason) for the other upstream failures
 * such as an unknown `$patch` value or a list element lacking its merge key.
 */
export function applyStrategicMergePatch(doc: unknown, patch: unknown, schema?: StructuralSchema): unknown {
  const original = isObject(doc) ? structuredClone(doc) : {};
  if (patch === null || patch === undefined) return original;
  if (!isObject(patch)) {
    throw PatchError.malformed(`json: cannot unmarshal ${goJsonKind(patch)} into Go value of type map[string]interface {}`);
  }
  return mergeMap(original, structuredClone(patch), schema);
}

function fieldMeta(schema: Schema, key: string, forList: boolean): FieldMeta {
  let field: Schema;
  let strategies: string[] = [];
  let mergeKey = '';
  if (schema?.properties && hasOwn(schema.properties, key)) {
    field = schema.properties[key];
    strategies = field['x-kubernetes-patch-strategy']?.split(',') ?? [];
    mergeKey = field['x-kubernetes-patch-merge-key'] ?? '';
  } else if (typeof schema?.additionalProperties === 'object') {
    field = schema.additionalProperties;
  }
  return { schema: forList ? field?.items : field, strategy: otherThanRetainKeys(strategies), mergeKey };
}

/** retainKeys only shapes how clients build patches; the server needs the other strategy of the pair. */
function otherThanRetainKeys(strategies: string[]): string {
  if (strategies.length === 0) return '';
  if (strategies.length === 1) return strategies[0] === 'retainKeys' ? '' : strategies[0];
  if (strategies.length === 2 && strategies[0] === 'retainKeys') return strategies[1];
  if (strategies.length === 2 && strategies[1] === 'retainKeys') return strategies[0];
  throw PatchError.unhandled(`unexpected patch strategy: ${goFormat(strategies)}`);
}

function typeKindName(schema: Schema): string {
  return schema?.additionalProperties && !schema.properties ? 'map' : 'struct';
}

function extractKey(key: string, prefix: string, error: string): string {
  const slash = key.indexOf('/');
  if (slash < 0 || key.slice(0, slash) !== prefix) throw PatchError.malformed(error);
  return key.slice(slash + 1);
}

function mergeMap(original: JsonMap, patch: JsonMap, schema: Schema): JsonMap {
  if (hasOwn(patch, DIRECTIVE)) {
    const directive = patch[DIRECTIVE];
    if (directive === 'replace') {
      delete patch[DIRECTIVE];
      return patch;
    }
    if (directive === 'delete') return {};
    throw PatchError.unknownPatchType(directive, patch);
  }
  applyRetainKeys(original, patch);
  applySetElementOrder(original, patch, schema);
  for (const [key, value] of Object.entries(patch)) mergeField(original, key, value, schema);
  return original;
}

function applyRetainKeys(original: JsonMap, patch: JsonMap): void {
  if (!hasOwn(patch, RETAIN_KEYS)) return;
  const list = patch[RETAIN_KEYS];
  delete patch[RETAIN_KEYS];
  if (!Array.isArray(list)) throw PatchError.malformed(ERR_RETAIN_KEYS);
  const retained = new Set(list.filter((k): k is string => typeof k === 'string'));
  for (const [k, v] of Object.entries(patch)) {
    if (v === null || k.startsWith(DELETE_PRIMITIVES) || k.startsWith(SET_ORDER)) continue;
    if (!retained.has(k)) throw PatchError.malformed(ERR_RETAIN_KEYS);
  }
  for (const k of Object.keys(original)) if (!retained.has(k)) delete original[k];
}

function mergeField(original: JsonMap, patchKey: string, patchValue: unknown, schema: Schema): void {
  const isDeleteList = patchKey.startsWith(DELETE_PRIMITIVES);
  const key = isDeleteList ? extractKey(patchKey, DELETE_PRIMITIVES, ERR_PRIMITIVE_LIST) : patchKey;
  if (patchValue === null) {
    // Upstream deletes the field even when the null came under a $deleteFromPrimitiveList key.
    delete original[key];
    return;
  }
  const current = hasOwn(original, key) ? original[key] : undefined;
  if (current === undefined || goTypeName(current) !== goTypeName(patchValue)) {
    if (!isDeleteList) setFromPatch(original, key, patchValue);
    return;
  }
  if (isObject(current)) {
    const meta = fieldMeta(schema, key, false);
    original[key] = meta.strategy === 'replace' ? patchValue : mergeMap(current, patchValue as JsonMap, meta.schema);
  } else if (Array.isArray(current)) {
    const meta = fieldMeta(schema, key, true);
    original[key] = mergeListField(current, patchValue as unknown[], meta, isDeleteList)[0];
  } else {
    original[key] = patchValue;
  }
}

/** The merged list and the edited view of `current` (see mergeList); lists without merge strategy are replaced. */
function mergeListField(current: unknown[], patch: unknown[], meta: FieldMeta, isDeleteList: boolean): [unknown[], unknown[]] {
  if (meta.strategy !== 'merge' && !isDeleteList) return [patch, current];
  return mergeList(current, patch, meta.schema, meta.mergeKey, isDeleteList);
}

/** A value new to the original: nulls inside it mean nothing and directive-bearing maps are dropped. */
function setFromPatch(original: JsonMap, key: string, value: unknown): void {
  discardNulls(value);
  const [cleaned, keep] = removeDirectives(value);
  if (keep) define(original, key, cleaned);
  else delete original[key];
}

function discardNulls(v: unknown): void {
  if (Array.isArray(v)) v.forEach(discardNulls);
  else if (isObject(v)) {
    for (const [k, e] of Object.entries(v)) {
      if (e === null) delete v[k];
      else discardNulls(e);
    }
  }
}

function removeDirectives(v: unknown): [unknown, boolean] {
  if (Array.isArray(v)) {
    const kept: unknown[] = [];
    for (const e of v) {
      const [cleaned, keep] = removeDirectives(e);
      if (keep) kept.push(cleaned);
    }
    return [kept, true];
  }
  if (!isObject(v)) return [v, true];
  if (hasOwn(v, DIRECTIVE)) return [null, false];
  for (const [k, e] of Object.entries(v)) {
    const [cleaned, keep] = removeDirectives(e);
    if (keep) v[k] = cleaned;
    else delete v[k];
  }
  return [v, true];
}

/** The single element type of the lists, as upstream's sliceElementType requires. */
function elementType(lists: unknown[][]): string {
  let found: string | undefined;
  for (const v of lists.flat()) {
    const t = goTypeName(v);
    if (found === undefined) {
      if (t === SLICE_TYPE) throw PatchError.rejected('lists of lists are not supported');
      found = t;
    } else if (found !== t) {
      throw PatchError.unhandled(`list element types are not identical: ${goFormat(lists)}`);
    }
  }
  if (found === undefined) throw PatchError.unhandled('no elements in any of the given slices');
  return found;
}

/**
 * Merges a list with a merge strategy. Also returns how the caller's slice of
 * `original` reads afterwards: upstream deletes and appends in place on the
 * live list's backing array, and `$setElementOrder` then orders server-only
 * items by that edited view.
 */
function mergeList(original: unknown[], patch: unknown[], schema: Schema, mergeKey: string, isDeleteList: boolean): [unknown[], unknown[]] {
  if (original.length === 0 && patch.length === 0) return [original, original];
  const kind = elementType([original, patch]);
  if (kind !== MAP_TYPE) {
    if (isDeleteList) return [original.filter((v) => !patch.includes(v)), original];
    const merged = dedupeScalars([...original, ...patch]);
    return [ordered(merged, patch, original, mergeKey, kind), original];
  }
  if (mergeKey === '') throw PatchError.unhandled(`cannot merge lists without merge key for ${typeKindName(schema)}`);
  const view = [...original];
  const { base, plain, replaced } = applyListDirectives(view, patch as JsonMap[], mergeKey);
  const merged = mergeByKey(base, plain, mergeKey, schema);
  // Appends reuse the backing array while it has room: the live list's length, as the server builds it.
  for (let at = base.length; !replaced && at < merged.length && at < view.length; at++) view[at] = merged[at];
  return [ordered(merged, plain, base, mergeKey, kind), view];
}

function ordered(merged: unknown[], patchItems: unknown[], serverOrder: unknown[], mergeKey: string, kind: string): unknown[] {
  const [inPatch, serverOnly] = partition(merged, patchItems, mergeKey);
  return normalizeOrder(inPatch, serverOnly, patchItems, serverOrder, mergeKey, kind);
}

/** Upstream's in-place dedupe, which moves the last element into each duplicate's slot. */
function dedupeScalars(list: unknown[]): unknown[] {
  const s = [...list];
  let last = s.length - 1;
  for (let i = 0; i < last; i++) {
    for (let j = i + 1; j <= last; j++) {
      if (s[i] === s[j]) {
        s[j] = s[last];
        s.length = last;
        last--;
        j--;
      }
    }
  }
  return s;
}

/**
 * Handles `$patch` elements of a merging list. Deletions shift `view` left in
 * place, as upstream's append(s[:i], s[i+1:]...) does. Returns the list to
 * merge into and the plain patch elements.
 */
function applyListDirectives(view: unknown[], patch: JsonMap[], mergeKey: string): { base: JsonMap[]; plain: JsonMap[]; replaced: boolean } {
  let length = view.length;
  const plain: JsonMap[] = [];
  let replaced = false;
  for (const el of patch) {
    if (!hasOwn(el, DIRECTIVE)) {
      plain.push(el);
      continue;
    }
    const directive = el[DIRECTIVE];
    if (directive === 'delete') {
      if (!hasOwn(el, mergeKey)) throw PatchError.noMergeKey(el, mergeKey);
      for (let i = findByKey(view, mergeKey, el[mergeKey], length); i >= 0; i = findByKey(view, mergeKey, el[mergeKey], length)) {
        view.copyWithin(i, i + 1, length);
        length--;
      }
    } else if (directive === 'replace') {
      replaced = true;
    } else if (directive === 'merge') {
      throw PatchError.unhandled('merging lists cannot yet be specified in the patch');
    } else {
      throw PatchError.unknownPatchType(directive, el);
    }
  }
  if (replaced) return { base: plain, plain: [], replaced };
  return { base: view.slice(0, length) as JsonMap[], plain, replaced };
}

function findByKey(list: unknown[], key: string, value: unknown, length = list.length): number {
  for (let i = 0; i < length; i++) {
    const el = list[i];
    if (!isObject(el)) throw PatchError.unhandled(`value for key ${i} is not a map`);
    if (hasOwn(el, key) && el[key] === value) return i;
  }
  return -1;
}

function mergeByKey(original: JsonMap[], patch: JsonMap[], mergeKey: string, schema: Schema): unknown[] {
  const out: unknown[] = [...original];
  for (const el of patch) {
    if (!hasOwn(el, mergeKey)) throw PatchError.noMergeKey(el, mergeKey);
    const i = findByKey(out, mergeKey, el[mergeKey]);
    if (i >= 0) out[i] = mergeMap(out[i] as JsonMap, el, schema);
    else out.push(el);
  }
  return out;
}

/** Splits `merged` into the items named by `by` and the server-only rest, both in `merged` order. */
function partition(merged: unknown[], by: unknown[], mergeKey: string): [unknown[], unknown[]] {
  const named: unknown[] = [];
  const rest: unknown[] = [];
  for (const v of merged) {
    let found: boolean;
    if (mergeKey === '') {
      found = by.includes(v);
    } else {
      if (!isObject(v)) throw PatchError.badArgType(MAP_TYPE, v);
      if (!hasOwn(v, mergeKey)) throw PatchError.noMergeKey(v, mergeKey);
      found = findByKey(by, mergeKey, v[mergeKey]) >= 0;
    }
    (found ? named : rest).push(v);
  }
  return [named, rest];
}

/** Position lookup by merge-key value (maps) or by value (scalars); a missing key reads as null, as in Go. */
function indexer(order: unknown[], mergeKey: string, kind: string): (v: unknown) => number {
  const identity = (v: unknown): unknown => (kind === MAP_TYPE ? (isObject(v) ? (v[mergeKey] ?? null) : null) : v);
  const positions = new Map<unknown, number>();
  order.forEach((v, i) => {
    const id = identity(v);
    if (!positions.has(id)) positions.set(id, i);
  });
  return (v) => positions.get(identity(v)) ?? -1;
}

/**
 * Upstream's normalizeElementOrder: patch items follow `patchOrder`,
 * server-only items follow `serverOrder`, then server-only items are
 * interleaved where the live order puts them.
 */
function normalizeOrder(
  patchItems: unknown[],
  serverOnly: unknown[],
  patchOrder: unknown[],
  serverOrder: unknown[],
  mergeKey: string,
  kind: string,
): unknown[] {
  const sortedPatch = sortByOrder(patchItems, patchOrder, mergeKey, kind);
  const left = sortByOrder(serverOnly, serverOrder, mergeKey, kind);
  const serverIndex = indexer(serverOrder, mergeKey, kind);
  const out: unknown[] = [];
  let i = 0;
  let j = 0;
  while (i < left.length || j < sortedPatch.length) {
    if (i >= left.length) out.push(sortedPatch[j++]);
    else if (j >= sortedPatch.length) out.push(left[i++]);
    else {
      const li = serverIndex(left[i]);
      const ri = serverIndex(sortedPatch[j]);
      if (li >= 0 && ri >= 0 && li < ri) out.push(left[i++]);
      else out.push(sortedPatch[j++]);
    }
  }
  return out;
}

function sortByOrder(items: unknown[], order: unknown[], mergeKey: string, kind: string): unknown[] {
  let toSort = items;
  let toDelete: unknown[] = [];
  if (kind === MAP_TYPE) {
    for (const v of [...items, ...order]) {
      if (!isObject(v)) throw PatchError.badArgType(MAP_TYPE, v);
      if (!hasOwn(v, mergeKey)) throw PatchError.noMergeKey(v, mergeKey);
    }
    toSort = items.filter((v) => (v as JsonMap)[DIRECTIVE] !== 'delete');
    toDelete = items.filter((v) => (v as JsonMap)[DIRECTIVE] === 'delete');
  }
  const index = indexer(order, mergeKey, kind);
  // Every item is placed in practice (they come from `order`); upstream's comparator would move unplaced ones forward.
  const ranked = toSort.map((v) => ({ v, at: index(v) }));
  ranked.sort((a, b) => (a.at >= 0 && b.at >= 0 ? a.at - b.at : 0));
  return [...ranked.map((r) => r.v), ...toDelete];
}

function asList(v: unknown): unknown[] {
  if (!Array.isArray(v)) throw PatchError.badArgType(SLICE_TYPE, v);
  return v;
}

/** Processes every `$setElementOrder/<field>` of `patch`, merging that field and fixing its order. */
function applySetElementOrder(original: JsonMap, patch: JsonMap, schema: Schema): void {
  for (const directiveKey of Object.keys(patch)) {
    if (!directiveKey.startsWith(SET_ORDER)) continue;
    const order = patch[directiveKey];
    delete patch[directiveKey];
    if (!Array.isArray(order)) throw PatchError.badArgType(SLICE_TYPE, order);
    const key = extractKey(directiveKey, SET_ORDER, ERR_SET_ORDER);
    const inOriginal = hasOwn(original, key);
    const inPatch = hasOwn(patch, key);
    const originalList = inOriginal ? asList(original[key]) : [];
    const patchList = inPatch ? asList(patch[key]) : [];
    const meta = fieldMeta(schema, key, true);
    checkOrderList(patchList, order, meta.mergeKey);
    let merged: unknown[];
    let liveOrder = originalList;
    if (inOriginal && inPatch) [merged, liveOrder] = mergeListField(originalList, patchList, meta, false);
    else if (inPatch) merged = removeDirectives(patchList)[0] as unknown[];
    else if (inOriginal) merged = originalList;
    else continue;
    const [named, serverOnly] = partition(merged, order, meta.mergeKey);
    const kind = elementType([originalList, patchList]);
    define(original, key, normalizeOrder(named, serverOnly, order, liveOrder, meta.mergeKey, kind));
    delete patch[key];
  }
}

function sameMergeKey(left: unknown, right: unknown, mergeKey: string): boolean {
  if (mergeKey === '') return left === right;
  if (!isObject(left)) throw PatchError.badArgType(MAP_TYPE, left);
  if (!isObject(right)) throw PatchError.badArgType(MAP_TYPE, right);
  if (!hasOwn(left, mergeKey)) throw PatchError.noMergeKey(left, mergeKey);
  if (!hasOwn(right, mergeKey)) throw PatchError.noMergeKey(right, mergeKey);
  return left[mergeKey] === right[mergeKey];
}

/** The patch list's items must appear in the `$setElementOrder` list, in the same relative order. */
function checkOrderList(patchList: unknown[], order: unknown[], mergeKey: string): void {
  if (order.length === 0 || patchList.length === 0) return;
  let items = patchList;
  if (mergeKey !== '') {
    for (const v of items) if (!isObject(v)) throw PatchError.badArgType(MAP_TYPE, v);
    items = items.filter((v) => (v as JsonMap)[DIRECTIVE] !== 'delete');
  }
  let p = 0;
  let s = 0;
  while (p < items.length && s < order.length) {
    const item = items[p];
    if (isObject(item) && hasOwn(item, DIRECTIVE)) {
      p++;
      continue;
    }
    if (sameMergeKey(item, order[s], mergeKey)) p++;
    s++;
  }
  if (p < items.length && s >= order.length) {
    throw PatchError.unhandled(
      `The order in patch list:\n${goFormat(patchList)}\n doesn't match ${SET_ORDER} list:\n${goFormat(order)}\n`,
    );
  }
}
