import type { ListCursor, Storage, StoredObject, TenantSnapshotRepository } from '@plinth/storage';
import type { ResourceDefinition } from '../registry/resource-definition.js';
import type { ExportPoint } from './snapshot-export.js';
import type { SnapshotRecord } from './snapshot-format.js';
import { SnapshotPacer } from './snapshot-pacer.js';
import { restoreOrder, writePaced } from './snapshot-restore.js';

/** What a restore from history names: a namespace (with everything in it), or one object. */
export type HistoryTarget = { namespace: string } | { def: ResourceDefinition; namespace: string; name: string };

/** What a restore from history reads and writes through. */
export interface HistoryRestoreDeps {
  storage: Pick<Storage, 'list'>;
  snapshots: Pick<TenantSnapshotRepository, 'resourcesAt' | 'revisionAt' | 'checkHistory' | 'writeBatch'>;
}

/** A named object that did not exist at the revision asked for. */
export class NotInHistoryError extends Error {}

/** What a restore from history did. */
export interface HistoryRestoreResult {
  revision: number;
  objects: number;
  /** The revision of the restore's last write. */
  written: number;
}

const PAGE = 500;

async function listAll(deps: HistoryRestoreDeps, tenant: string, resource: string, namespace: string | undefined, at: number, name?: string): Promise<StoredObject[]> {
  const out: StoredObject[] = [];
  let after: ListCursor | undefined;
  do {
    const fieldRequirements = name === undefined ? undefined : [{ field: 'metadata.name' as const, operator: '=' as const, value: name }];
    const page = await deps.storage.list({ tenant, resource, namespace, atRevision: at, limit: PAGE, after, fieldRequirements });
    out.push(...page.items);
    after = page.next;
  } while (after);
  return out;
}

/**
 * Brings back, into the live tenant, what `targets` name as it was at
 * `point` (a revision, or the state at a time) from the kept change
 * history: a namespace with every object in it then (of every resource),
 * or single objects. Each comes back with its name, uid, labels,
 * ownerReferences, finalizers and data of then, replacing whatever is at
 * its key now (removed first, then created), with a new
 * resourceVersion; owners before dependents, in paced batches (as a
 * snapshot restore: writePaced). Throws
 * StorageError Expired when the point is older than the kept history or
 * than the tenant itself (a tenant deleted and re-created under its name),
 * NotInHistoryError when a named object did not exist then.
 */
export async function restoreFromHistory(deps: HistoryRestoreDeps, tenant: string, point: ExportPoint, targets: HistoryTarget[]): Promise<HistoryRestoreResult> {
  const at = point.revision ?? (point.time ? await deps.snapshots.revisionAt(tenant, point.time) : undefined);
  if (at === undefined) throw new NotInHistoryError('a restore from history needs a revision or a time');
  // Never across a deletion and re-creation of the tenant's name: Expired naming where its history starts.
  await deps.snapshots.checkHistory(tenant, at);
  const found = new Map<string, StoredObject>();
  const add = (o: StoredObject) => found.set(`${o.key.resource}\u0000${o.key.namespace}\u0000${o.key.name}`, o);
  let resources: string[] | undefined;
  for (const t of targets) {
    if ('def' in t) {
      const [o] = await listAll(deps, tenant, t.def.storageResource, t.def.namespaced ? t.namespace : undefined, at, t.name);
      if (!o) throw new NotInHistoryError(`${t.def.resource}${t.def.group ? `.${t.def.group}` : ''} ${t.def.namespaced ? `${t.namespace}/` : ''}${t.name} did not exist at revision ${at}`);
      add(o);
      continue;
    }
    const [ns] = await listAll(deps, tenant, 'namespaces', undefined, at, t.namespace);
    if (!ns) throw new NotInHistoryError(`namespace ${t.namespace} did not exist at revision ${at}`);
    add(ns);
    resources ??= await deps.snapshots.resourcesAt(tenant, at);
    for (const resource of resources) {
      if (resource === 'namespaces') continue;
      for (const o of await listAll(deps, tenant, resource, t.namespace, at)) if (o.key.namespace === t.namespace) add(o);
    }
  }
  const records: SnapshotRecord[] = [...found.values()].map((o) => ({ resource: o.key.resource, namespace: o.key.namespace, name: o.key.name, object: o.body }));
  const ordered = restoreOrder(records);
  const creates = ordered.map((r) => ({ key: { tenant, resource: r.resource, namespace: r.namespace, name: r.name }, body: r.object! }));
  const written = await writePaced(deps, tenant, creates, new SnapshotPacer());
  return { revision: at, objects: ordered.length, written };
}
