import { isDeepStrictEqual } from 'node:util';
import { ApplyConflictError, type Conflict } from './apply-conflict.js';
import type { ObjectType } from './field-schema.js';
import { fieldElement } from './fields-v1.js';
import { cloneJsonValue } from '../object/json-clone.js';
import { rfc3339Now } from '../object/timestamp.js';
import {
  capUpdateManagers,
  decodeManagedFields,
  encodeManagedFields,
  isResetRequest,
  type ManagedFields,
  managerIdentifier,
} from './managed-fields.js';
import { PathSet } from './path-set.js';
import { compareObjects, type Comparison, dropNulls, mergeObjects, removePaths, toFieldSet, withNamedFieldsAsMembers } from './typed-value.js';

/** A Kubernetes object as plain JSON. */
export type JsonObject = Record<string, unknown> & { metadata?: Record<string, unknown> };

/** Where a write lands: the object's type, the request's version and subresource, and the fields that endpoint does not write. */
export interface FieldManagerScope {
  type: ObjectType;
  /** group/version of the request (`v1`, `example.com/v1`). */
  apiVersion: string;
  /** '' for the main resource, else `status`, `scale`… */
  subresource: string;
  /** Top-level fields this endpoint resets (upstream's GetResetFields): `status` on the main resource, `spec` on /status. */
  resetFields: readonly string[];
  /** The kind's zero object (what a Go client's empty struct serialises to), the "live" object of a create. */
  emptyObject: JsonObject;
  /** RFC 3339 seconds; the clock, replaceable in tests. */
  now?: () => string;
}

/** The annotation client-side apply keeps the applied configuration in. */
export const LAST_APPLIED_ANNOTATION = 'kubectl.kubernetes.io/last-applied-configuration';
/** Upstream's limit on the total size of an object's annotations. */
export const ANNOTATIONS_SIZE_LIMIT = 256 * 1024;

const STRIPPED = new PathSet();
for (const p of [['apiVersion'], ['kind'], ['metadata'], ...['name', 'namespace', 'creationTimestamp', 'selfLink', 'uid', 'clusterName', 'generation', 'managedFields', 'resourceVersion'].map((f) => ['metadata', f])]) {
  STRIPPED.insert(p.map(fieldElement));
}

/** A shallow view of `obj` without metadata.managedFields; shares everything else with `obj`, so callers must not mutate it. */
function withoutManagedFields(obj: JsonObject): JsonObject {
  const meta = obj.metadata;
  if (!meta || typeof meta !== 'object' || !('managedFields' in meta)) return obj;
  const { managedFields: _dropped, ...rest } = meta;
  return { ...obj, metadata: rest };
}

function decodeOrEmpty(entries: unknown): ManagedFields {
  try {
    return decodeManagedFields(entries);
  } catch {
    return new Map();
  }
}

function ignoring(c: Comparison, reset: readonly string[]): Comparison {
  const prefixes = reset.map(fieldElement);
  return { added: c.added.withoutPrefixes(prefixes), removed: c.removed.withoutPrefixes(prefixes), modified: c.modified.withoutPrefixes(prefixes) };
}

function writeManaged(obj: JsonObject, managed: ManagedFields): void {
  for (const [id, m] of managed) if (m.set.empty()) managed.delete(id);
  capUpdateManagers(managed);
  const entries = encodeManagedFields(managed);
  if (!obj.metadata || typeof obj.metadata !== 'object') obj.metadata = {};
  if (entries) obj.metadata.managedFields = entries;
  else delete obj.metadata.managedFields;
}

/**
 * Records an Update (create, PUT, non-apply patch) by `manager` in
 * `next.metadata.managedFields` (mutates `next`): the fields it added or
 * changed become its own and leave other managers; removed fields leave
 * everyone. managedFields sent in `next` are used when valid (`[]` or
 * `[{}]` resets them), else the live object's are kept; a subresource
 * write always keeps the live ones. `live` is null on create. Never
 * throws: when the objects do not fit the schema, managedFields are dropped.
 */
export function trackUpdate(live: JsonObject | null, next: JsonObject, manager: string, scope: FieldManagerScope): void {
  try {
    trackUpdateOrThrow(live, next, manager, scope);
  } catch {
    // As upstream's UpdateNoErrors: an object the schema cannot walk (validation rejects it later) keeps no managedFields.
    if (next.metadata && typeof next.metadata === 'object') delete next.metadata.managedFields;
  }
}

function trackUpdateOrThrow(live: JsonObject | null, next: JsonObject, manager: string, scope: FieldManagerScope): void {
  const liveObj = live ?? scope.emptyObject;
  const sent = next.metadata?.managedFields;
  let managed: ManagedFields;
  if (scope.subresource) managed = decodeOrEmpty(liveObj.metadata?.managedFields);
  else if (isResetRequest(sent)) managed = new Map();
  else {
    managed = decodeOrEmpty(sent);
    if (managed.size === 0) managed = decodeOrEmpty(liveObj.metadata?.managedFields);
  }
  const cmp = ignoring(compareObjects(withoutManagedFields(liveObj), withoutManagedFields(next), scope.type), scope.resetFields);
  // A create's comparison is all additions (cmp is this function's own, so sharing its sets is safe).
  const changed = cmp.modified.empty() ? cmp.added : cmp.modified.union(cmp.added);
  if (managed.size > 0) {
    const taken = changed.union(cmp.removed);
    for (const m of managed.values()) m.set = m.set.difference(taken);
  }
  const own = changed.difference(STRIPPED);
  if (!own.empty()) {
    const key = { manager, operation: 'Update' as const, apiVersion: scope.apiVersion, subresource: scope.subresource };
    const id = managerIdentifier(key);
    const prev = managed.get(id);
    managed.set(id, { ...key, set: prev ? prev.set.union(own) : own, time: (scope.now ?? rfc3339Now)() });
  }
  writeManaged(next, managed);
}

/**
 * Server-side apply of `config` by `manager` onto `live` (null: the
 * object does not exist yet). Returns the new object with its
 * managedFields; inputs are not mutated. Fields the manager applied last
 * time and no longer applies are removed unless someone else owns them.
 * Throws ApplyConflictError when the apply changes fields other managers
 * own and `force` is false (for the manager `kubectl`, fields that match
 * the client-side last-applied configuration do not conflict), and
 * TypedValueError when `config` does not fit the schema.
 */
export function applyConfiguration(live: JsonObject | null, config: JsonObject, manager: string, force: boolean, scope: FieldManagerScope): JsonObject {
  const liveObj = withoutManagedFields(live ?? scope.emptyObject);
  const managed = decodeOrEmpty(live?.metadata?.managedFields);
  const configSet = toFieldSet(config, scope.type, true).withoutPrefixes(scope.resetFields.map(fieldElement)).difference(STRIPPED);
  const merged = mergeObjects(liveObj, config, scope.type) as JsonObject;
  const key = { manager, operation: 'Apply' as const, apiVersion: scope.apiVersion, subresource: scope.subresource };
  const id = managerIdentifier(key);
  const last = managed.get(id)?.set;
  managed.set(id, { ...key, set: configSet });
  if (last && !last.empty()) prune(merged, managed, last, scope);
  const cmp = ignoring(compareObjects(liveObj, merged, scope.type), scope.resetFields);
  const changed = cmp.modified.union(cmp.added);
  const conflicts = conflictsWith(managed, id, changed);
  if (conflicts.length > 0 && !force) {
    const remaining = manager === 'kubectl' ? conflictsNotAllowedByLastApplied(conflicts, liveObj, scope) : conflicts;
    if (remaining.length > 0) throw new ApplyConflictError(remaining);
  }
  for (const [mid, m] of managed) if (mid !== id) m.set = m.set.difference(changed).difference(cmp.removed);
  managed.get(id)!.time = (scope.now ?? rfc3339Now)();
  if (manager === 'kubectl') syncLastApplied(merged, config);
  dropNulls(merged, scope.type);
  writeManaged(merged, managed);
  return merged;
}

/** Removes (in place) what `last` had and nobody, the new configuration included, owns now. */
function prune(merged: JsonObject, managed: ManagedFields, last: PathSet, scope: FieldManagerScope): void {
  const owned = new PathSet();
  for (const m of managed.values()) owned.addAll(m.set);
  const gone = withNamedFieldsAsMembers(last, scope.type).difference(withNamedFieldsAsMembers(owned, scope.type)).difference(STRIPPED);
  if (!gone.empty()) removePaths(merged, gone, scope.type);
}

function conflictsWith(managed: ManagedFields, applier: string, changed: PathSet): Conflict[] {
  const out: Conflict[] = [];
  for (const mid of [...managed.keys()].sort()) {
    if (mid === applier) continue;
    for (const path of managed.get(mid)!.set.intersection(changed).paths()) out.push({ manager: mid, path });
  }
  return out;
}

/**
 * Upgrading from client-side apply: fields recorded in the last-applied
 * annotation that still hold those values in the live object are the
 * applier's already; the other conflicts remain.
 */
function conflictsNotAllowedByLastApplied(conflicts: Conflict[], liveObj: JsonObject, scope: FieldManagerScope): Conflict[] {
  const raw = (liveObj.metadata?.annotations as Record<string, unknown> | undefined)?.[LAST_APPLIED_ANNOTATION];
  if (typeof raw !== 'string' || raw === '') return conflicts;
  let lastApplied: JsonObject;
  try {
    lastApplied = JSON.parse(raw) as JsonObject;
    if (lastApplied === null || typeof lastApplied !== 'object' || lastApplied.apiVersion !== scope.apiVersion) return conflicts;
    const cmp = compareObjects(lastApplied, liveObj, scope.type);
    const allowed = toFieldSet(lastApplied, scope.type).difference(cmp.modified).difference(cmp.added).difference(cmp.removed);
    return conflicts.filter((c) => !allowed.has(c.path));
  } catch {
    return conflicts;
  }
}

/** Keeps an existing last-applied annotation in step with what `kubectl` applies server-side, dropped when it would not fit. */
function syncLastApplied(merged: JsonObject, config: JsonObject): void {
  const annotations = merged.metadata?.annotations as Record<string, string> | undefined;
  if (!annotations || typeof annotations[LAST_APPLIED_ANNOTATION] !== 'string' || annotations[LAST_APPLIED_ANNOTATION] === '') return;
  const copy = structuredClone(config);
  const ca = copy.metadata?.annotations as Record<string, unknown> | undefined;
  if (ca) delete ca[LAST_APPLIED_ANNOTATION];
  annotations[LAST_APPLIED_ANNOTATION] = `${sortedJson(copy)}\n`;
  let size = 0;
  for (const [k, v] of Object.entries(annotations)) size += Buffer.byteLength(k) + Buffer.byteLength(String(v));
  if (size > ANNOTATIONS_SIZE_LIMIT) delete annotations[LAST_APPLIED_ANNOTATION];
}

function sortedJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(sortedJson).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    return `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${sortedJson((v as Record<string, unknown>)[k])}`).join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

/**
 * Upstream's IgnoreManagedFieldsTimestampsTransformer: when a write changes
 * nothing but managedFields timestamps, keep the old managedFields so the
 * write is a no-op. Mutates `next`.
 */
export function keepTimestampsWhenUnchanged(next: JsonObject, old: JsonObject): void {
  const nm = next.metadata?.managedFields;
  const om = old.metadata?.managedFields;
  if (!Array.isArray(nm) || !Array.isArray(om) || nm.length !== om.length || nm === om) return;
  const strip = (entries: unknown[]) => entries.map((e) => ({ ...(e as Record<string, unknown>), time: undefined }));
  if (!isDeepStrictEqual(strip(nm), strip(om))) return;
  if (!isDeepStrictEqual(withoutManagedFields(next), withoutManagedFields(old))) return;
  next.metadata!.managedFields = cloneJsonValue(om);
}

/** The reason `entries` are not valid managedFields, or undefined when they are. */
export function managedFieldsProblem(entries: unknown): string | undefined {
  try {
    decodeManagedFields(entries);
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}
