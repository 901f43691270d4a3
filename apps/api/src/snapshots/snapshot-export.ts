import type { ListCursor, Storage, StoredObject, TenantSnapshotRepository } from '@plinth/storage';
import type { TenantObject } from '../kinds/tenant/tenant-api.js';
import { AGE_X25519, type SnapshotHeader, SnapshotWriter, SNAPSHOT_FORMAT, SNAPSHOT_VERSION } from './snapshot-format.js';
import { SnapshotPacer } from './snapshot-pacer.js';
import { RecipientError, SECRETS_RESOURCE, secretSealer } from './snapshot-secrets.js';

/** Objects read per list page (each page is one short statement at the snapshot's revision). */
export const EXPORT_PAGE = 250;

/** What an export reads. */
export interface SnapshotExportDeps {
  storage: Pick<Storage, 'list' | 'currentRevision'>;
  snapshots: Pick<TenantSnapshotRepository, 'resourcesAt' | 'revisionAt' | 'checkHistory'>;
  /** Paces the export as low-priority work (default: a new {@link SnapshotPacer} with SNAPSHOT_PACE). */
  pacer?: () => SnapshotPacer;
}

/** Which state to export: the newest (neither set), a revision, or the state at a time. */
export interface ExportPoint {
  revision?: number;
  time?: Date;
}

/** What {@link prepareExport} returns: the revision chosen and the snapshot's bytes, to be streamed once. */
export interface PreparedExport {
  revision: number;
  chunks: AsyncGenerator<Buffer, void, undefined>;
}

/**
 * Prepares the export of `tenant` (its Tenant object) at `at`: chooses the
 * revision R, the resources to read, checks that R is still in the kept
 * history (StorageError Expired otherwise) and that Secrets have
 * recipients (RecipientError when the tenant held Secrets at R and none
 * was named, or a recipient is not an age key), all before the first byte.
 * The returned generator then reads every resource at R page by page, each
 * page one short read (no transaction spans the export; writes go on),
 * paced as low-priority work (SnapshotPacer: slices of the event loop, a
 * rest after each page),
 * and yields the snapshot: header, records, trailer. An error while
 * streaming ends the generator without a trailer, so the snapshot reads
 * as truncated.
 */
export async function prepareExport(deps: SnapshotExportDeps, tenant: TenantObject, at: ExportPoint, recipients: string[]): Promise<PreparedExport> {
  const name = tenant.metadata.name!;
  const revision = at.revision ?? (at.time ? await deps.snapshots.revisionAt(name, at.time) : await deps.storage.currentRevision(name));
  // Before the tenant (of this name) was created: another tenant's history, or none (Expired).
  if (at.revision !== undefined || at.time) await deps.snapshots.checkHistory(name, revision);
  const resources = await deps.snapshots.resourcesAt(name, revision);
  // A first read at R: Expired (compacted) or TooLargeResourceVersion surface before the answer starts.
  const first = await deps.storage.list({ tenant: name, resource: resources[0] ?? SECRETS_RESOURCE, atRevision: revision, limit: 1 });
  const seal = recipients.length > 0 ? secretSealer(recipients) : undefined;
  if (!seal && resources.includes(SECRETS_RESOURCE)) {
    const secrets = resources[0] === SECRETS_RESOURCE ? first : await deps.storage.list({ tenant: name, resource: SECRETS_RESOURCE, atRevision: revision, limit: 1 });
    if (secrets.items.length > 0) throw new RecipientError(`tenant ${name} holds Secrets: name at least one recipient (an age X25519 public key, age1…) to seal them to`);
  }
  const header: SnapshotHeader = {
    format: SNAPSHOT_FORMAT,
    version: SNAPSHOT_VERSION,
    tenant: {
      name,
      uid: tenant.metadata.uid,
      ...(tenant.metadata.labels ? { labels: tenant.metadata.labels } : {}),
      ...(tenant.metadata.annotations ? { annotations: tenant.metadata.annotations } : {}),
      spec: (tenant.spec ?? {}) as Record<string, unknown>,
    },
    revision,
    createdAt: new Date().toISOString(),
    secrets: seal ? { scheme: AGE_X25519, recipients } : { scheme: 'none' },
  };
  return { revision, chunks: stream(deps, name, revision, resources, header, seal, deps.pacer?.() ?? new SnapshotPacer()) };
}

async function* stream(
  deps: SnapshotExportDeps,
  tenant: string,
  revision: number,
  resources: string[],
  header: SnapshotHeader,
  seal: ((body: Record<string, unknown>) => Promise<string>) | undefined,
  pacer: SnapshotPacer,
): AsyncGenerator<Buffer, void, undefined> {
  const w = new SnapshotWriter();
  yield w.header(header);
  for (const resource of resources) {
    let after: ListCursor | undefined;
    do {
      // Low-priority work: each page's read and encoding rests in proportion to its time, in slices of the event loop.
      const t0 = performance.now();
      const page = await deps.storage.list({ tenant, resource, atRevision: revision, limit: EXPORT_PAGE, after });
      const lines: Buffer[] = [];
      for (const item of page.items) {
        lines.push(await recordLine(w, item, seal));
        await pacer.step();
      }
      const work = performance.now() - t0;
      if (lines.length > 0) yield Buffer.concat(lines);
      after = page.next;
      await pacer.rest(work);
    } while (after);
  }
  yield w.trailer();
}

async function recordLine(w: SnapshotWriter, item: StoredObject, seal: ((body: Record<string, unknown>) => Promise<string>) | undefined): Promise<Buffer> {
  const { resource, namespace, name } = item.key;
  if (resource === SECRETS_RESOURCE && seal) return w.record({ resource, namespace, name, sealed: await seal(item.body) });
  return w.record({ resource, namespace, name, object: item.body });
}
