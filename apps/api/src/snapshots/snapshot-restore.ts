import type { CurrentKey, ObjectKey, Storage, StoredObject, TenantSnapshotRepository } from '@plinth/storage';
import { BOOTSTRAP_LABEL } from '../kinds/rbac/bootstrap-policy.js';
import { CRD_STORAGE_RESOURCE } from '../kinds/customresourcedefinition/crd.resource.js';
import { SYSTEM_NAMESPACES } from '../kinds/namespace/system-namespaces.js';
import { describe, type ParsedSnapshot, type SnapshotRecord, SnapshotFormatError } from './snapshot-format.js';
import { BatchSizer, SnapshotPacer } from './snapshot-pacer.js';

/** The fewest and most objects per restore batch (one lookup and one call of the batched-write procedure). */
export const RESTORE_BATCH_MIN = 16;
export const RESTORE_BATCH_MAX = 60;
/**
 * The time a restore batch aims at (its lookup, its transaction holding
 * the shard's revision counter, its commit): other writes on the shard
 * wait at most about this long for the counter (see BatchSizer).
 */
export const RESTORE_BATCH_TARGET_MS = 15;

/** What a restore writes through. */
export interface SnapshotRestoreDeps {
  snapshots: Pick<TenantSnapshotRepository, 'currentKeys' | 'writeBatch'>;
  /** Reads what a restore replaces, to put it back when the restore fails (without: nothing is put back). */
  storage?: Pick<Storage, 'get'>;
  /** Paces the restore as low-priority work (default: a new {@link SnapshotPacer} with SNAPSHOT_PACE). */
  pacer?: () => SnapshotPacer;
}

/** Options of {@link restoreSnapshot}. */
export interface RestoreOptions {
  /** Remove whatever the tenant holds first (else a tenant holding more than its provisioning made is refused). */
  replace: boolean;
  /** Objects per batch, fixed (tests set it; default: sized by {@link BatchSizer} towards {@link RESTORE_BATCH_TARGET_MS}). */
  batch?: number;
}

/**
 * A restore failed after it had written: what it created was removed
 * again (`undone`), so the tenant holds what it held before (with
 * `replace`, minus what was removed first). `cause` is the first failure.
 */
export class RestoreUndoneError extends Error {
  constructor(
    override readonly cause: unknown,
    readonly written: number,
    readonly undone: boolean,
  ) {
    super(cause instanceof Error ? cause.message : String(cause));
  }
}

/** The destination holds objects of its own and replacing was not asked for (409). */
export class TenantNotEmptyError extends Error {}

/** What a restore did. */
export interface RestoreResult {
  objects: number;
  removed: number;
  /** The revision of the restore's last write on the destination's shard. */
  revision: number;
}

/** The ConfigMap the root CA publisher keeps in every namespace: the destination's own CA, never replaced by a snapshot's. */
const ROOT_CA_CONFIGMAP = 'kube-root-ca.crt';

const isRootCa = (k: { resource: string; name: string }) => k.resource === 'configmaps' && k.name === ROOT_CA_CONFIGMAP;

/**
 * True for what every new tenant gets on its own: its system namespaces,
 * default roles and owners' binding (provisioning), and each namespace's
 * `default` ServiceAccount and `kube-root-ca.crt` ConfigMap (controllers).
 * A tenant holding only these is empty for a restore.
 */
export function isProvisioned(k: CurrentKey): boolean {
  if (k.resource === 'namespaces') return SYSTEM_NAMESPACES.includes(k.name);
  if (isRootCa(k) || (k.resource === 'serviceaccounts' && k.name === 'default')) return true;
  const [label, value] = Object.entries(BOOTSTRAP_LABEL)[0];
  return k.labels[label] === value || k.labels['tenancy.plinth.dev/owners'] === 'true';
}

/**
 * Restores a checked snapshot (see parseSnapshot; Secrets opened) into
 * `tenant`, which must exist: refuses (TenantNotEmptyError) when it holds
 * anything its provisioning did not make, unless `replace`; removes what it
 * holds under the snapshot's keys (with `replace`: everything but its
 * root CA ConfigMaps, which stay the destination's own and are not
 * restored), then
 * creates every object as it was (name, uid, labels, ownerReferences,
 * finalizers, managedFields, status), namespaces and CRDs first, owners
 * before their dependents (so no garbage collector sees a dependent
 * without its owner), in batches;
 * an object a controller made meanwhile under a snapshot's key (a
 * restored namespace's `default` ServiceAccount) is replaced by the
 * snapshot's.
 * Each object gets a new resourceVersion from the destination shard's
 * counter; admission does not run (the objects were admitted when first
 * written), tenant limits and ResourceQuota counts are enforced by storage.
 * Throws SnapshotFormatError when a record is still sealed. Written as
 * low-priority work: batches sized so each holds the shard's revision
 * counter about {@link RESTORE_BATCH_TARGET_MS}, with rests between them
 * ({@link SnapshotPacer}). A failure after the first write removes
 * what the restore created and, unless `replace`, creates again what it
 * had replaced (read through `deps.storage` first), then throws
 * {@link RestoreUndoneError} (a failure before any write: the error itself).
 */
export async function restoreSnapshot(deps: SnapshotRestoreDeps, tenant: string, snapshot: ParsedSnapshot, options: RestoreOptions): Promise<RestoreResult> {
  const sealed = snapshot.records.find((r) => r.object === undefined);
  if (sealed) throw new SnapshotFormatError(`${describe(sealed)} is sealed: open the snapshot's Secrets first (npm run tenant -- import --identity <key file>)`);
  const current = await deps.snapshots.currentKeys(tenant);
  if (!options.replace) {
    const own = current.filter((k) => !isProvisioned(k));
    if (own.length > 0) {
      const some = own.slice(0, 3).map((k) => describe(k)).join(', ');
      throw new TenantNotEmptyError(`tenant ${tenant} is not empty (${own.length} objects besides what its provisioning made, e.g. ${some}): restore into a new tenant, or ask to replace its content`);
    }
  }
  const keyOf = (r: Pick<SnapshotRecord, 'resource' | 'namespace' | 'name'>): ObjectKey => ({ tenant, resource: r.resource, namespace: r.namespace, name: r.name });
  const id = (r: Pick<SnapshotRecord, 'resource' | 'namespace' | 'name'>) => `${r.resource}\u0000${r.namespace}\u0000${r.name}`;
  // Root CA ConfigMaps are the destination's own (its CA): its publisher makes them in every namespace, restored ones too.
  const records = snapshot.records.filter((r) => !isRootCa(r));
  const inSnapshot = new Set(records.map(id));
  const remove = current.filter((k) => !isRootCa(k) && (options.replace || inSnapshot.has(id(k)))).map((k) => keyOf(k));
  const ordered = restoreOrder(records);
  // What the restore replaces in a tenant it does not empty (objects its provisioning made): kept to put back on failure.
  const saved = options.replace || !deps.storage ? [] : (await Promise.all(remove.map((k) => deps.storage!.get(k)))).filter((o) => o !== undefined);
  const pacer = deps.pacer?.() ?? new SnapshotPacer();
  const creates = ordered.map((r) => ({ key: keyOf(r), body: r.object! }));
  let revision = 0;
  let removed = 0;
  let written = 0;
  try {
    revision = await writePaced(deps, tenant, remove.map((key) => ({ remove: key })), pacer, options.batch, (n) => (removed = n));
    revision = Math.max(revision, await writePaced(deps, tenant, creates, pacer, options.batch, (n) => (written = n)));
  } catch (err) {
    if (written === 0 && (removed === 0 || saved.length === 0)) throw err;
    // Namespaces this restore brought in: controllers filled them meanwhile (a `default` ServiceAccount, the root CA ConfigMap).
    const had = new Set(current.filter((k) => k.resource === 'namespaces').map((k) => k.name));
    const namespaces = new Set(creates.slice(0, written).filter((c) => c.key.resource === 'namespaces' && !had.has(c.key.name)).map((c) => c.key.name));
    throw new RestoreUndoneError(err, written, await undo(deps, tenant, creates.slice(0, written), saved, namespaces, pacer, options.batch));
  }
  return { objects: ordered.length, removed: remove.length, revision };
}

/**
 * The order objects are restored in: namespaces, then CRDs, then the rest;
 * within each, an object after every owner of it the snapshot holds (by
 * uid). Pure; does not reorder `records` itself.
 */
export function restoreOrder(records: SnapshotRecord[]): SnapshotRecord[] {
  const byUid = new Map<string, SnapshotRecord>();
  for (const r of records) byUid.set(String((r.object?.metadata as { uid?: string } | undefined)?.uid), r);
  const depth = new Map<SnapshotRecord, number>();
  const depthOf = (r: SnapshotRecord, seen: Set<SnapshotRecord>): number => {
    const known = depth.get(r);
    if (known !== undefined) return known;
    if (seen.has(r)) return 0; // an ownership cycle: upstream's GC tolerates it, so does the order
    seen.add(r);
    const owners = ((r.object?.metadata as { ownerReferences?: Array<{ uid?: string }> } | undefined)?.ownerReferences ?? [])
      .map((o) => byUid.get(String(o.uid)))
      .filter((o): o is SnapshotRecord => o !== undefined && o !== r);
    const d = owners.length === 0 ? 0 : 1 + Math.max(...owners.map((o) => depthOf(o, seen)));
    depth.set(r, d);
    return d;
  };
  const cls = (r: SnapshotRecord) => (r.resource === 'namespaces' ? 0 : r.resource === CRD_STORAGE_RESOURCE ? 1 : 2);
  const keyed = records.map((r, i) => ({ r, i, c: cls(r), d: depthOf(r, new Set()) }));
  keyed.sort((a, b) => a.c - b.c || a.d - b.d || a.i - b.i);
  return keyed.map((k) => k.r);
}

/**
 * Undoes a restore that failed half-way: removes what it created
 * (`created`) and what controllers made meanwhile in the namespaces it
 * brought in (`namespaces`), then creates again what it had replaced
 * (`saved`: same names, uids and content, new resourceVersions). Returns false when that
 * failed too (the shard went away): the caller says so.
 */
async function undo(
  deps: { snapshots: Pick<TenantSnapshotRepository, 'writeBatch' | 'currentKeys'> },
  tenant: string,
  created: Array<{ key: ObjectKey }>,
  saved: StoredObject[],
  namespaces: Set<string>,
  pacer: SnapshotPacer,
  fixed?: number,
): Promise<boolean> {
  try {
    await writePaced(deps, tenant, created.map((c) => ({ remove: c.key })), pacer, fixed);
    const filled = namespaces.size === 0 ? [] : (await deps.snapshots.currentKeys(tenant)).filter((k) => namespaces.has(k.namespace));
    await writePaced(deps, tenant, filled.map((k) => ({ remove: { tenant, resource: k.resource, namespace: k.namespace, name: k.name } })), pacer, fixed);
    await writePaced(deps, tenant, saved.map((o) => ({ key: o.key, body: o.body })), pacer, fixed);
    return true;
  } catch {
    return false;
  }
}

/** One write of a paced restore: a key to remove, or an object to create (replacing what is at its key). */
type PacedWrite = { remove: ObjectKey } | { key: ObjectKey; body: Record<string, unknown> };

/**
 * Writes `writes` in order as low-priority work: batches of a size fixed
 * (`fixed`) or adapted so each takes about {@link RESTORE_BATCH_TARGET_MS}
 * (its transaction holds the shard's revision counter, so other writes on
 * the shard wait at most that long), with rests between them and slices of
 * the event loop (`pacer`). Calls `progress` with how many writes are done
 * after each batch. Returns the revision of the last write (0 for none).
 * Throws what writeBatch throws; the batches before stay written.
 */
export async function writePaced(
  deps: { snapshots: Pick<TenantSnapshotRepository, 'writeBatch'> },
  tenant: string,
  writes: PacedWrite[],
  pacer: SnapshotPacer,
  fixed?: number,
  progress?: (done: number) => void,
): Promise<number> {
  const sizer = new BatchSizer(RESTORE_BATCH_TARGET_MS, RESTORE_BATCH_MIN, RESTORE_BATCH_MAX);
  let revision = 0;
  for (let i = 0; i < writes.length; ) {
    const slice = writes.slice(i, i + (fixed ?? sizer.size));
    const batch = { remove: [] as ObjectKey[], create: [] as Array<{ key: ObjectKey; body: Record<string, unknown> }> };
    for (const w of slice) if ('remove' in w) batch.remove.push(w.remove);
    else batch.create.push(w);
    const t0 = performance.now();
    revision = Math.max(revision, await deps.snapshots.writeBatch(tenant, batch));
    const ms = performance.now() - t0;
    i += slice.length;
    progress?.(i);
    sizer.observe(slice.length, ms);
    await pacer.rest(ms);
  }
  return revision;
}
