import type { CurrentKey, ObjectKey, TenantSnapshotRepository } from '@plinth/storage';
import { BOOTSTRAP_LABEL } from '../kinds/rbac/bootstrap-policy.js';
import { CRD_STORAGE_RESOURCE } from '../kinds/customresourcedefinition/crd.resource.js';
import { SYSTEM_NAMESPACES } from '../kinds/namespace/system-namespaces.js';
import { describe, type ParsedSnapshot, type SnapshotRecord, SnapshotFormatError } from './snapshot-format.js';

/** Objects per restore batch (each written as the write batcher writes, in transactions of up to 60 writes). */
export const RESTORE_BATCH = 250;

/** What a restore writes through. */
export interface SnapshotRestoreDeps {
  snapshots: Pick<TenantSnapshotRepository, 'currentKeys' | 'writeBatch'>;
}

/** Options of {@link restoreSnapshot}. */
export interface RestoreOptions {
  /** Remove whatever the tenant holds first (else a tenant holding more than its provisioning made is refused). */
  replace: boolean;
  /** Objects per batch (tests shorten it). */
  batch?: number;
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
 * without its owner), in batches of {@link RESTORE_BATCH} objects;
 * an object a controller made meanwhile under a snapshot's key (a
 * restored namespace's `default` ServiceAccount) is replaced by the
 * snapshot's.
 * Each object gets a new resourceVersion from the destination shard's
 * counter; admission does not run (the objects were admitted when first
 * written), tenant limits and ResourceQuota counts are enforced by storage.
 * Throws SnapshotFormatError when a record is still sealed. A failure
 * after the first batch leaves the batches before it written (the caller
 * reports it; rerun with `replace`).
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
  const size = options.batch ?? RESTORE_BATCH;
  let revision = 0;
  for (let i = 0; i < remove.length; i += size) revision = await deps.snapshots.writeBatch(tenant, { remove: remove.slice(i, i + size), create: [] });
  for (let i = 0; i < ordered.length; i += size) {
    const create = ordered.slice(i, i + size).map((r) => ({ key: keyOf(r), body: r.object! }));
    revision = await deps.snapshots.writeBatch(tenant, { remove: [], create });
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
