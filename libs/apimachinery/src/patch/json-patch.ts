import jsonpatch, { type Operation as LibraryOperation } from 'fast-json-patch';
import { PatchError, goJsonKind } from './patch-error.js';

/** Upstream's cap on operations in one JSON patch (maxJSONPatchOperations). */
export const MAX_JSON_PATCH_OPERATIONS = 10000;

/** Upstream's default JSONPatchMaxCopyBytes: how much `copy` operations may grow a document. */
export const DEFAULT_JSON_PATCH_MAX_COPY_BYTES = 3 * 1024 * 1024;

/** Request-level knobs that change how upstream treats a JSON patch. */
export interface JsonPatchOptions {
  /** The `fieldValidation` query parameter; upstream defaults to Warn. */
  fieldValidation?: 'Ignore' | 'Warn' | 'Strict';
  /** Limit on bytes added by `copy` operations; 0 means unlimited. */
  maxCopyBytes?: number;
}

type Container = Record<string, unknown> | unknown[];
type Operation = Record<string, unknown>;

/** Where an operation lands: the parent container, the raw last token, and the canonical pointer to the parent. */
interface Location {
  container: Container;
  key: string;
  parent: string[];
}

interface PatchState {
  doc: unknown;
  copied: number;
  maxCopyBytes: number;
}

/** An operation that cannot apply; its message is the text upstream's json-patch library produces. */
class OperationFailure extends Error {}

function fail(message: string): never {
  throw new OperationFailure(message);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function hasOwn(o: object, key: string): boolean {
  return Object.prototype.hasOwnProperty.call(o, key);
}

/**
 * Applies an RFC 6902 JSON patch as kube-apiserver does (evanphx/json-patch
 * v4 semantics: negative array indices, `replace` of a missing object key
 * adds it, absent `value` means null). `doc` and `patchBody` are not mutated;
 * the result shares no objects with either.
 * Throws PatchError: 400 when the body is not a list of operation objects,
 * 413 past 10000 operations, 422 (generic message) when an operation fails.
 */
export function applyJsonPatch(doc: unknown, patchBody: unknown, options: JsonPatchOptions = {}): unknown {
  const ops = decodeJsonPatch(patchBody, options.fieldValidation ?? 'Warn');
  if (ops.length > MAX_JSON_PATCH_OPERATIONS) {
    throw PatchError.tooManyOperations(MAX_JSON_PATCH_OPERATIONS, ops.length);
  }
  const state: PatchState = {
    doc: jsonpatch.deepClone(doc),
    copied: 0,
    maxCopyBytes: options.maxCopyBytes ?? DEFAULT_JSON_PATCH_MAX_COPY_BYTES,
  };
  for (const op of ops) {
    try {
      applyOperation(state, op);
    } catch (e) {
      if (e instanceof OperationFailure) throw PatchError.rejected(e.message);
      throw e;
    }
  }
  return state.doc;
}

/** Mirrors upstream's two decoding passes: the strict typed one (unless Ignore), then DecodePatch. */
function decodeJsonPatch(body: unknown, fieldValidation: string): Array<Operation | null> {
  if (fieldValidation !== 'Ignore') checkTypedShape(body);
  if (body === null || body === undefined) return [];
  if (!Array.isArray(body)) {
    throw PatchError.malformed(`json: cannot unmarshal ${goJsonKind(body)} into Go value of type jsonpatch.Patch`);
  }
  for (const el of body) {
    if (el !== null && !isObject(el)) {
      throw PatchError.malformed(`json: cannot unmarshal ${goJsonKind(el)} into Go value of type jsonpatch.Operation`);
    }
  }
  return body as Array<Operation | null>;
}

/** Upstream decodes into []jsonPatchOp{op,path,from string} first; the first type error is a 400. */
function checkTypedShape(body: unknown): void {
  const bad = (what: string): never => {
    throw PatchError.malformed(`error decoding patch: json: cannot unmarshal ${what}`);
  };
  if (body === null || body === undefined) return;
  if (!Array.isArray(body)) bad(`${goJsonKind(body)} into Go value of type []handlers.jsonPatchOp`);
  for (const el of body as unknown[]) {
    if (el === null) continue;
    if (!isObject(el)) bad(`${goJsonKind(el)} into Go value of type handlers.jsonPatchOp`);
    for (const [k, v] of Object.entries(el as Operation)) {
      if ((k === 'op' || k === 'path' || k === 'from') && v !== null && typeof v !== 'string') {
        bad(`${goJsonKind(v)} into Go struct field jsonPatchOp.${k} of type string`);
      }
    }
  }
}

function applyOperation(state: PatchState, op: Operation | null): void {
  const kind = typeof op?.op === 'string' ? op.op : 'unknown';
  if (op === null) fail(`Unexpected kind: ${kind}`);
  switch (kind) {
    case 'add':
      return addOp(state, op);
    case 'remove':
      return removeOp(state, op);
    case 'replace':
      return replaceOp(state, op);
    case 'move':
      return moveOp(state, op);
    case 'test':
      return testOp(state, op);
    case 'copy':
      return copyOp(state, op);
    default:
      fail(`Unexpected kind: ${kind}`);
  }
}

/** Reads `path` or `from`; `wrap` turns the decoding problem into the operation's own message. */
function pointerField(op: Operation, field: 'path' | 'from', wrap: (inner: string) => string): string {
  const v = op[field];
  if (v === undefined || v === null) {
    fail(wrap(field === 'path' ? 'operation missing path field: missing value' : 'operation, missing from field: missing value'));
  }
  if (typeof v !== 'string') fail(wrap(`json: cannot unmarshal ${goJsonKind(v)} into Go value of type string`));
  return v;
}

function valueOf(op: Operation): unknown {
  return hasOwn(op, 'value') ? jsonpatch.deepClone(op.value) : null;
}

function unescapeToken(t: string): string {
  return t.replace(/~[01]/g, (m) => (m === '~1' ? '/' : '~'));
}

/** Go's strconv.Atoi: a decimal with optional sign, within int64. Returns the number or the error text. */
function atoi(s: string): number | string {
  if (!/^[+-]?\d+$/.test(s)) return `strconv.Atoi: parsing ${JSON.stringify(s)}: invalid syntax`;
  const big = BigInt(s);
  if (big > 2n ** 63n - 1n || big < -(2n ** 63n)) return `strconv.Atoi: parsing ${JSON.stringify(s)}: value out of range`;
  return Number(big);
}

function invalidIndex(idx: number): string {
  return `Unable to access invalid index: ${idx}: invalid index referenced`;
}

/** The element index `key` reads in `arr` (negative counts from the end), or the error text. */
function readIndex(arr: unknown[], key: string): number | string {
  let idx = atoi(key);
  if (typeof idx === 'string') return idx;
  if (idx < 0) {
    if (idx < -arr.length) return invalidIndex(idx);
    idx += arr.length;
  }
  return idx >= arr.length ? invalidIndex(idx) : idx;
}

/** The insertion index `key` means for add ('-' appends, negative counts from the new end), or the error text. */
function insertIndex(arr: unknown[], key: string): number | string {
  if (key === '-') return arr.length;
  let idx = atoi(key);
  if (typeof idx === 'string') return `value was not a proper array index: '${key}': ${idx}`;
  const size = arr.length + 1;
  if (idx >= size) return invalidIndex(idx);
  if (idx < 0) {
    if (idx < -size) return invalidIndex(idx);
    idx += size;
  }
  return idx;
}

/** The index remove deletes; unlike reads, the upper bound is checked before negatives are resolved. */
function removeIndex(arr: unknown[], key: string): number | string {
  let idx = atoi(key);
  if (typeof idx === 'string') return idx;
  if (idx >= arr.length) return invalidIndex(idx);
  if (idx < 0) {
    if (idx < -arr.length) return invalidIndex(idx);
    idx += arr.length;
  }
  return idx;
}

/** Upstream's findObject: walks all but the last token; undefined when any step is missing or a scalar. */
function findObject(doc: unknown, path: string): Location | undefined {
  const split = path.split('/');
  if (split.length < 2 || (!isObject(doc) && !Array.isArray(doc))) return undefined;
  let cur: Container = doc;
  const parent: string[] = [];
  for (const raw of split.slice(1, -1)) {
    const part = unescapeToken(raw);
    let next: unknown;
    if (Array.isArray(cur)) {
      const idx = readIndex(cur, part);
      if (typeof idx === 'string') return undefined;
      next = cur[idx];
      parent.push(String(idx));
    } else {
      next = hasOwn(cur, part) ? cur[part] : undefined;
      parent.push(part);
    }
    if (!isObject(next) && !Array.isArray(next)) return undefined;
    cur = next;
  }
  return { container: cur, key: unescapeToken(split[split.length - 1]), parent };
}

function locate(state: PatchState, path: string, missing: string): Location {
  return findObject(state.doc, path) ?? fail(missing);
}

/** Performs one primitive edit through fast-json-patch at a pointer already proven to resolve. */
function mutate(state: PatchState, kind: 'add' | 'remove' | 'replace', loc: Location, token: string, value?: unknown): void {
  const path = '/' + [...loc.parent, token].map((t) => jsonpatch.escapePathComponent(t)).join('/');
  try {
    state.doc = jsonpatch.applyOperation(state.doc, { op: kind, path, value } as LibraryOperation, false, true, true).newDocument;
  } catch (e) {
    // fast-json-patch refuses __proto__ and constructor/prototype tokens outright.
    if (e instanceof TypeError) fail(e.message);
    throw e;
  }
}

function readAt(loc: Location, wrap: (e: string) => string): unknown {
  if (!Array.isArray(loc.container)) return hasOwn(loc.container, loc.key) ? loc.container[loc.key] : undefined;
  const idx = readIndex(loc.container, loc.key);
  if (typeof idx === 'string') fail(wrap(idx));
  return loc.container[idx];
}

function insertAt(state: PatchState, loc: Location, value: unknown, wrap: (e: string) => string): void {
  if (!Array.isArray(loc.container)) return mutate(state, 'add', loc, loc.key, value);
  const idx = insertIndex(loc.container, loc.key);
  if (typeof idx === 'string') fail(wrap(idx));
  mutate(state, 'add', loc, String(idx), value);
}

function removeAt(state: PatchState, loc: Location, wrap: (e: string) => string): void {
  if (!Array.isArray(loc.container)) {
    if (!hasOwn(loc.container, loc.key)) fail(wrap(`Unable to remove nonexistent key: ${loc.key}: missing value`));
    return mutate(state, 'remove', loc, loc.key);
  }
  const idx = removeIndex(loc.container, loc.key);
  if (typeof idx === 'string') fail(wrap(idx));
  mutate(state, 'remove', loc, String(idx));
}

function addOp(state: PatchState, op: Operation): void {
  const path = pointerField(op, 'path', () => 'add operation failed to decode path: missing value');
  const loc = locate(state, path, `add operation does not apply: doc is missing path: "${path}": missing value`);
  insertAt(state, loc, valueOf(op), (e) => `error in add for path: '${path}': ${e}`);
}

function removeOp(state: PatchState, op: Operation): void {
  const path = pointerField(op, 'path', () => 'remove operation failed to decode path: missing value');
  const loc = locate(state, path, `remove operation does not apply: doc is missing path: "${path}": missing value`);
  removeAt(state, loc, (e) => `error in remove for path: '${path}': ${e}`);
}

function replaceOp(state: PatchState, op: Operation): void {
  const path = pointerField(op, 'path', (e) => `replace operation failed to decode path: ${e}`);
  if (path === '') {
    const value = op.value;
    if (!isObject(value) && !Array.isArray(value)) fail('replace operation value must be object or array: %!w(<nil>)');
    state.doc = jsonpatch.deepClone(value);
    return;
  }
  const loc = locate(state, path, `replace operation does not apply: doc is missing path: ${path}: missing value`);
  if (!Array.isArray(loc.container)) return mutate(state, 'replace', loc, loc.key, valueOf(op));
  const idx = readIndex(loc.container, loc.key);
  if (typeof idx === 'string') fail(`replace operation does not apply: doc is missing key: ${path}: missing value`);
  mutate(state, 'replace', loc, String(idx), valueOf(op));
}

function moveOp(state: PatchState, op: Operation): void {
  const from = pointerField(op, 'from', (e) => `move operation failed to decode from: ${e}`);
  const src = locate(state, from, `move operation does not apply: doc is missing from path: ${from}: missing value`);
  const inKey = (e: string): string => `error in move for path: '${src.key}': ${e}`;
  const value = readAt(src, inKey) ?? null;
  removeAt(state, src, inKey);
  const path = pointerField(op, 'path', (e) => `move operation failed to decode path: ${e}`);
  const dst = locate(state, path, `move operation does not apply: doc is missing destination path: ${path}: missing value`);
  insertAt(state, dst, value, (e) => `error in move for path: '${path}': ${e}`);
}

function testOp(state: PatchState, op: Operation): void {
  const path = pointerField(op, 'path', (e) => `test operation failed to decode path: ${e}`);
  const hasValue = hasOwn(op, 'value');
  const failed = `testing value ${path} failed: test failed`;
  if (path === '') {
    if (!hasValue || !jsonpatch._areEquals(state.doc, op.value)) fail(failed);
    return;
  }
  const loc = locate(state, path, `test operation does not apply: is missing path: ${path}: missing value`);
  const actual = readAt(loc, (e) => `error in test for path: '${path}': ${e}`);
  // Upstream cannot tell a missing key from an explicit null, and treats an absent value as null.
  if (actual === undefined || actual === null) {
    if (!hasValue || op.value === null) return;
    fail(failed);
  }
  if (!hasValue || !jsonpatch._areEquals(actual, op.value)) fail(failed);
}

function copyOp(state: PatchState, op: Operation): void {
  const from = pointerField(op, 'from', (e) => `copy operation failed to decode from: ${e}`);
  const src = locate(state, from, `copy operation does not apply: doc is missing from path: ${from}: missing value`);
  const value = readAt(src, (e) => `error in copy for from: '${from}': ${e}`) ?? null;
  const path = pointerField(op, 'path', () => 'copy operation failed to decode path: missing value');
  const dst = locate(state, path, `copy operation does not apply: doc is missing destination path: ${path}: missing value`);
  if (value !== null) state.copied += Buffer.byteLength(JSON.stringify(value), 'utf8');
  if (state.maxCopyBytes > 0 && state.copied > state.maxCopyBytes) {
    fail(`Unable to complete the copy, the accumulated size increase of copy is ${state.copied}, exceeding the limit ${state.maxCopyBytes}`);
  }
  insertAt(state, dst, jsonpatch.deepClone(value), (e) => `error while adding value during copy: ${e}`);
}
