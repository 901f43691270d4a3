import type { Logger } from 'pino';
import type { Storage, TenantSnapshotRepository } from '@plinth/storage';
import type { ControllerManager } from '../controllers/controller-manager.js';
import { InformerController, type KeySource, onInformer } from '../controllers/informer-controller.js';
import type { SharedInformer } from '../controllers/shared-informer.js';
import { PLATFORM_TENANT, SOURCE_CONDITION, type TenantObject, type TenantSource, TENANT_STORAGE_RESOURCE } from '../kinds/tenant/tenant-api.js';
import { parseSnapshot, SnapshotFormatError } from './snapshot-format.js';
import type { SnapshotMetrics } from './snapshot-metrics.js';
import { restoreSnapshot, TenantNotEmptyError } from './snapshot-restore.js';
import { identitiesIn, openSealed } from './snapshot-secrets.js';
import { SnapshotNotFoundError, type SnapshotTarget } from './snapshot-target.js';
import { type TenantStatusWriter, withCondition } from './tenant-status.js';

/** What the restorer reads and writes through. */
export interface TenantSourceRestorerDeps {
  tenantObjects: SharedInformer;
  queues: Pick<ControllerManager, 'queue'>;
  /** Reads the Tenant afresh (the informer may lag behind the condition just written) and the identity Secret. */
  storage: Pick<Storage, 'get'>;
  snapshots: Pick<TenantSnapshotRepository, 'currentKeys' | 'writeBatch'>;
  /** Where spec.source.snapshot is read from; undefined when none is configured. */
  target: SnapshotTarget | undefined;
  writeStatus: TenantStatusWriter;
  metrics: SnapshotMetrics;
  logger: Logger;
}

/** A failure that running again will not mend: reported as the condition's reason, not retried. */
class SourceFailure extends Error {
  constructor(
    readonly reason: string,
    message: string,
  ) {
    super(message);
  }
}

/** Reasons of a False SourceRestored that end the restore (a spec.source cannot change: delete the Tenant and create it again). */
const FINAL = new Set(['NoSnapshotTarget', 'SnapshotNotFound', 'InvalidSnapshot', 'IdentityNotFound', 'CannotOpen', 'TenantNotEmpty']);

/**
 * Restores a new tenant from its spec.source (docs/snapshots.md): once the
 * Tenant is Active, reads the snapshot from the snapshot target, opens its
 * Secrets with the identity in the Secret spec.source.identitySecretRef
 * names (platform scope), and restores it with the snapshot restore
 * (snapshots/snapshot-restore.ts: same names, uids, owner links). The
 * SourceRestored condition says Unknown (Restoring) while it runs, True
 * when done, False with a reason when it failed: a missing or damaged
 * snapshot, a missing identity, one that does not open it are final; any
 * other failure (a shard away) is retried with backoff, the next attempt
 * replacing what the failed one wrote. A controller of the
 * ControllerManager: one replica runs it.
 */
export class TenantSourceRestorer extends InformerController {
  constructor(private readonly deps: TenantSourceRestorerDeps) {
    super({ name: 'tenant-source-restorer', workers: 2, queues: deps.queues });
  }

  protected sources(): KeySource[] {
    return [onInformer(this.deps.tenantObjects, (e) => (e.type !== 'delete' && (e.object.body as TenantObject).spec?.source ? e.object.key.name : undefined))];
  }

  protected async reconcile(name: string): Promise<void> {
    const stored = await this.deps.storage.get({ tenant: PLATFORM_TENANT, resource: TENANT_STORAGE_RESOURCE, namespace: '', name });
    const t = stored?.body as TenantObject | undefined;
    const source = t?.spec?.source;
    if (!t || !source || t.metadata.deletionTimestamp || t.status?.phase !== 'Active') return;
    const cond = t.status.conditions?.find((c) => c.type === SOURCE_CONDITION);
    if (cond && (cond.status === 'True' || (cond.status === 'False' && FINAL.has(cond.reason)))) return;
    // An attempt that started (or failed midway) may have written part of the snapshot: the next one replaces it.
    const replace = cond !== undefined;
    await this.deps.writeStatus(name, (s, cur) => withCondition(s, cur, SOURCE_CONDITION, 'Unknown', 'Restoring', `restoring snapshot ${source.snapshot}${this.deps.target ? ` from ${this.deps.target.description}` : ''}`));
    try {
      const message = await this.restore(name, source, replace);
      this.deps.metrics.restores.inc({ result: 'success' });
      this.deps.logger.info({ tenant: name, snapshot: source.snapshot }, 'tenant restored from spec.source');
      await this.deps.writeStatus(name, (s, cur) => withCondition(s, cur, SOURCE_CONDITION, 'True', 'Restored', message));
    } catch (err) {
      this.deps.metrics.restores.inc({ result: 'failure' });
      const final = err instanceof SourceFailure;
      const reason = final ? err.reason : 'RestoreFailed';
      const message = `restoring snapshot ${source.snapshot} failed: ${(err as Error).message}${final ? '' : '; retrying'}`;
      this.deps.logger.warn({ tenant: name, snapshot: source.snapshot, reason, err: (err as Error).message }, 'tenant restore from spec.source failed');
      await this.deps.writeStatus(name, (s, cur) => withCondition(s, cur, SOURCE_CONDITION, 'False', reason, message));
      if (!final) throw err;
    }
  }

  /** Reads, checks, opens and restores the snapshot; resolves with the condition's message. Throws SourceFailure for final failures. */
  private async restore(name: string, source: TenantSource, replace: boolean): Promise<string> {
    const target = this.deps.target;
    if (!target) throw new SourceFailure('NoSnapshotTarget', 'no snapshot target is configured (PLINTH_SNAPSHOT_DIR or PLINTH_SNAPSHOT_S3_URL)');
    let bytes: Buffer;
    try {
      bytes = await target.read(source.snapshot);
    } catch (err) {
      if (err instanceof SnapshotNotFoundError) throw new SourceFailure('SnapshotNotFound', err.message);
      throw err;
    }
    let parsed;
    try {
      parsed = parseSnapshot(bytes);
    } catch (err) {
      if (err instanceof SnapshotFormatError) throw new SourceFailure('InvalidSnapshot', `invalid snapshot: ${err.message}; nothing was restored`);
      throw err;
    }
    if (parsed.records.some((r) => r.sealed !== undefined)) {
      const identities = await this.identities(source);
      try {
        parsed.header = await openSealed(parsed.header, parsed.records, identities);
      } catch (err) {
        if (err instanceof SnapshotFormatError) throw new SourceFailure('CannotOpen', `${err.message}; nothing was restored`);
        throw err;
      }
    }
    let result;
    try {
      result = await restoreSnapshot(this.deps, name, parsed, { replace });
    } catch (err) {
      if (err instanceof TenantNotEmptyError) throw new SourceFailure('TenantNotEmpty', err.message);
      if (err instanceof SnapshotFormatError) throw new SourceFailure('InvalidSnapshot', err.message);
      throw err;
    }
    return `restored ${result.objects} objects of tenant ${parsed.header.tenant.name} at revision ${parsed.header.revision} from ${source.snapshot}`;
  }

  /** The age identities in the Secret spec.source.identitySecretRef names. Throws SourceFailure when there is none. */
  private async identities(source: TenantSource): Promise<string[]> {
    const ref = source.identitySecretRef;
    if (!ref) throw new SourceFailure('IdentityNotFound', 'the snapshot\'s Secrets are sealed: name a Secret holding an age identity in spec.source.identitySecretRef');
    const key = ref.key ?? 'identity';
    const secret = await this.deps.storage.get({ tenant: PLATFORM_TENANT, resource: 'secrets', namespace: ref.namespace, name: ref.name });
    const data = (secret?.body as { data?: Record<string, string> } | undefined)?.data;
    if (!secret || typeof data?.[key] !== 'string') throw new SourceFailure('IdentityNotFound', `no key ${JSON.stringify(key)} in Secret ${ref.namespace}/${ref.name} of the platform scope`);
    const ids = identitiesIn(Buffer.from(data[key], 'base64').toString('utf8'));
    if (ids.length === 0) throw new SourceFailure('IdentityNotFound', `Secret ${ref.namespace}/${ref.name} key ${key} holds no age identity (AGE-SECRET-KEY-1…)`);
    return ids;
  }
}
