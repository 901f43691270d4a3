import { decodeFieldsV1, encodeFieldsV1 } from './fields-v1.js';
import { PathSet } from './path-set.js';

/** `Apply` for server-side apply, `Update` for every other write. */
export type ManagedOperation = 'Apply' | 'Update';

/** One `metadata.managedFields` entry, as the API serves it. */
export interface ManagedFieldsEntry {
  manager?: string;
  operation: ManagedOperation;
  apiVersion: string;
  time?: string;
  fieldsType: 'FieldsV1';
  fieldsV1: Record<string, unknown>;
  subresource?: string;
}

/** What one manager owns through one operation (and, for Update, one apiVersion and subresource). */
export interface ManagerFields {
  manager: string;
  operation: ManagedOperation;
  apiVersion: string;
  subresource: string;
  time?: string;
  set: PathSet;
}

/** Managers keyed by their identifier (see managerIdentifier). */
export type ManagedFields = Map<string, ManagerFields>;

/** Thrown when managedFields cannot be decoded; the message is upstream's. */
export class ManagedFieldsError extends Error {}

/** Most Update entries kept; older ones are merged into `ancient-changes` (upstream's DefaultMaxUpdateManagers). */
export const MAX_UPDATE_MANAGERS = 10;
const ANCIENT_CHANGES = 'ancient-changes';

/**
 * A manager's identity, as upstream builds it: the JSON of the entry
 * without fields and time, and without apiVersion for appliers (so an
 * applier is one manager across versions).
 */
export function managerIdentifier(m: { manager: string; operation: ManagedOperation; apiVersion: string; subresource: string }): string {
  const id: Record<string, string> = {};
  if (m.manager) id.manager = m.manager;
  id.operation = m.operation;
  if (m.operation !== 'Apply' && m.apiVersion) id.apiVersion = m.apiVersion;
  if (m.subresource) id.subresource = m.subresource;
  return JSON.stringify(id);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Reads `metadata.managedFields`. Throws ManagedFieldsError for a bad
 * operation, a missing apiVersion or fieldsType, or unreadable fieldsV1.
 * A later entry with the same identity replaces an earlier one.
 */
export function decodeManagedFields(entries: unknown): ManagedFields {
  const out: ManagedFields = new Map();
  if (entries === undefined || entries === null) return out;
  if (!Array.isArray(entries)) throw new ManagedFieldsError('managedFields must be a list');
  entries.forEach((e, i) => {
    if (!isObject(e)) throw new ManagedFieldsError(`managed fields entry ${i} is not an object`);
    if (e.operation !== 'Apply' && e.operation !== 'Update') throw new ManagedFieldsError('operation must be `Apply` or `Update`');
    if (typeof e.apiVersion !== 'string' || e.apiVersion === '') throw new ManagedFieldsError('apiVersion must not be empty');
    if (e.fieldsType === undefined || e.fieldsType === '') throw new ManagedFieldsError(`missing fieldsType in managed fields entry ${i}`);
    if (e.fieldsType !== 'FieldsV1') throw new ManagedFieldsError(`invalid fieldsType ${JSON.stringify(e.fieldsType)} in managed fields entry ${i}`);
    let set: PathSet;
    try {
      set = decodeFieldsV1(e.fieldsV1 ?? {});
    } catch (err) {
      throw new ManagedFieldsError(`error decoding versioned set from entry ${i}: ${(err as Error).message}`);
    }
    const m: ManagerFields = {
      manager: typeof e.manager === 'string' ? e.manager : '',
      operation: e.operation,
      apiVersion: e.apiVersion,
      subresource: typeof e.subresource === 'string' ? e.subresource : '',
      time: typeof e.time === 'string' ? e.time : undefined,
      set,
    };
    out.set(managerIdentifier(m), m);
  });
  return out;
}

/** True for the two ways a writer asks to reset managedFields: `[]` and `[{}]`. */
export function isResetRequest(entries: unknown): boolean {
  if (!Array.isArray(entries)) return false;
  if (entries.length === 0) return true;
  return entries.length === 1 && isObject(entries[0]) && Object.keys(entries[0]).length === 0;
}

function seconds(t: string | undefined): number {
  const ms = t ? Date.parse(t) : NaN;
  return Number.isNaN(ms) ? 0 : Math.floor(ms / 1000);
}

/**
 * Entries in upstream's order (Apply before Update, then by time, manager,
 * apiVersion, subresource), without empty sets. Returns undefined when no
 * manager owns anything.
 */
export function encodeManagedFields(managed: ManagedFields): ManagedFieldsEntry[] | undefined {
  const list = [...managed.values()].filter((m) => !m.set.empty());
  if (list.length === 0) return undefined;
  list.sort(
    (p, q) =>
      cmp(p.operation, q.operation) ||
      seconds(p.time) - seconds(q.time) ||
      cmp(p.manager, q.manager) ||
      cmp(p.apiVersion, q.apiVersion) ||
      cmp(p.subresource, q.subresource),
  );
  return list.map((m) => {
    const e: ManagedFieldsEntry = { manager: m.manager, operation: m.operation, apiVersion: m.apiVersion } as ManagedFieldsEntry;
    if (!m.manager) delete e.manager;
    if (m.time) e.time = m.time;
    e.fieldsType = 'FieldsV1';
    e.fieldsV1 = encodeFieldsV1(m.set);
    if (m.subresource) e.subresource = m.subresource;
    return e;
  });
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Keeps at most `max` Update entries: the oldest are merged, per
 * apiVersion, into an `ancient-changes` entry. Mutates `managed`.
 */
export function capUpdateManagers(managed: ManagedFields, max = MAX_UPDATE_MANAGERS): void {
  const updaters = [...managed.entries()].filter(([, m]) => m.operation === 'Update');
  if (updaters.length <= max) return;
  updaters.sort(([ia, a], [ib, b]) => seconds(a.time) - seconds(b.time) || cmp(ia, ib));
  let count = updaters.length;
  const firstOfVersion = new Map<string, string>();
  for (const [id, m] of updaters) {
    if (count <= max) break;
    const bucketId = managerIdentifier({ manager: ANCIENT_CHANGES, operation: 'Update', apiVersion: m.apiVersion, subresource: '' });
    const first = firstOfVersion.get(m.apiVersion);
    if (first === undefined) {
      firstOfVersion.set(m.apiVersion, id);
      continue;
    }
    if (!managed.has(bucketId)) {
      const firstFields = managed.get(first)!;
      managed.delete(first);
      managed.set(bucketId, { ...firstFields, manager: ANCIENT_CHANGES, subresource: '' });
    }
    const bucket = managed.get(bucketId)!;
    managed.set(bucketId, { ...bucket, set: bucket.set.union(m.set), time: m.time });
    managed.delete(id);
    count--;
  }
}
