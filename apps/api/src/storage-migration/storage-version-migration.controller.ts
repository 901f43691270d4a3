import type { Logger } from 'pino';
import { ApiError, type KubeObject, rfc3339Now } from '@plinth/apimachinery';
import { isStorageError, type ListCursor, type ObjectListRepository, type ObjectStoreRepository, type StoredObject } from '@plinth/storage';
import type { Controller } from '../controllers/controller.js';
import type { ControllerManager } from '../controllers/controller-manager.js';
import type { WorkQueue } from '../controllers/work-queue.js';
import { fromStorage, toStorage, type ResourceDefinition } from '../registry/resource-definition.js';
import type { ResourceRegistry } from '../registry/resource-registry.js';
import type { ResourceStoreService } from '../resource-store/resource-store.service.js';
import type { WriteContext } from '../resource-store/write-context.js';
import type { ObserveChanges } from '../watch/observe-changes.js';
import { STORAGE_MIGRATION_GROUP, STORAGE_MIGRATION_STORAGE_RESOURCE, STORAGE_MIGRATION_VERSION } from '../kinds/storagemigration/storage-version-migration.schema.js';
import { storageVersionMigrationStatusStrategy } from '../kinds/storagemigration/storage-version-migration.strategy.js';
import { hasTrueCondition, migrationResource, MIGRATION_FAILED, MIGRATION_RUNNING, MIGRATION_SUCCEEDED } from '../kinds/storagemigration/storage-version-migration.validation.js';

/** upstream's condition reasons (pkg/controller/storageversionmigrator). */
const REASON = { [MIGRATION_RUNNING]: 'StorageVersionMigrationInProgress', [MIGRATION_SUCCEEDED]: 'StorageVersionMigrationSucceeded', [MIGRATION_FAILED]: 'StorageVersionMigrationFailed' };
/** A resource not served yet may be a CRD just created: upstream waits a minute before failing. */
const NOT_FOUND_GRACE_MS = 60_000;
/** Objects read per page. */
const PAGE = 500;
/** At most one progress message per this many milliseconds. */
const PROGRESS_EVERY_MS = 1000;
const CONTROLLER_USER = { username: 'system:serviceaccount:kube-system:storage-version-migrator-controller', uid: '', groups: ['system:masters', 'system:authenticated'] };

/** What the controller works with. */
export interface StorageVersionMigrationDeps {
  registry: ResourceRegistry;
  objects: ObjectStoreRepository;
  lists: ObjectListRepository;
  store: ResourceStoreService;
  tenants: () => Promise<string[]>;
  observe: ObserveChanges;
  queues: Pick<ControllerManager, 'queue'>;
  logger: Logger;
  /** How long an unknown resource is waited for before the migration fails (default 60 s, as upstream). */
  notFoundGraceMs?: number;
}

/** What one migration did (the Succeeded condition's message). */
export interface MigrationCounts {
  checked: number;
  rewritten: number;
}

const keyOf = (tenant: string, name: string) => `${tenant}\u0000${name}`;

/**
 * Upstream's storage version migrator controller (KEP-4192, beta in 1.35),
 * per tenant and elected (one replica runs it), behind the
 * StorageVersionMigrator gate. For each StorageVersionMigration not yet
 * Succeeded or Failed: resolves spec.resource among the kinds served to the
 * tenant (built-in or custom; an unknown one fails the migration after a
 * minute, `resource not found`), records the current revision in
 * status.resourceVersion with Running=True, then walks the resource's
 * stored objects page by page and rewrites every one that is not in the
 * storage version's form or not sealed by its resource's first encryption
 * provider (the read's `stale`), each conditionally on the revision read:
 * an object changed or deleted meanwhile was written in the current form by
 * that write. No admission, as the storage layer's own re-encoding
 * upstream. Ends with Running=False and Succeeded=True (or Failed=True on
 * an error), with upstream's reasons; the Running message carries progress.
 */
export class StorageVersionMigrationController implements Controller {
  readonly name = 'storage-version-migrator-controller';
  private readonly queue: WorkQueue;
  private stopObserving: (() => void) | undefined;

  constructor(private readonly deps: StorageVersionMigrationDeps) {
    this.queue = deps.queues.queue({ name: this.name, workers: 2, process: (key) => this.sync(key) });
  }

  start(): void {
    this.queue.start();
    this.stopObserving = this.deps.observe(STORAGE_MIGRATION_STORAGE_RESOURCE, {
      onChange: (c) => {
        if (c.type !== 'DELETED') this.queue.add(keyOf(c.key.tenant, c.key.name));
      },
      onReset: () => void this.resync(),
    });
    void this.resync();
  }

  async stop(): Promise<void> {
    this.stopObserving?.();
    this.stopObserving = undefined;
    await this.queue.shutDown();
  }

  private async resync(): Promise<void> {
    try {
      for (const tenant of await this.deps.tenants()) {
        for (const item of (await this.deps.lists.list({ tenant, resource: STORAGE_MIGRATION_STORAGE_RESOURCE })).items) this.queue.add(keyOf(tenant, item.key.name));
      }
    } catch (err) {
      this.deps.logger.warn({ err: (err as Error).message }, `${this.name}: migrations could not be listed`);
    }
  }

  private migrationDef(tenant: string): ResourceDefinition | undefined {
    return this.deps.registry.lookup(tenant, STORAGE_MIGRATION_GROUP, STORAGE_MIGRATION_VERSION, 'storageversionmigrations');
  }

  private async sync(key: string): Promise<void> {
    const [tenant, name] = key.split('\u0000');
    const def = this.migrationDef(tenant);
    if (!def) return;
    const found = await this.deps.objects.get({ tenant, resource: STORAGE_MIGRATION_STORAGE_RESOURCE, namespace: '', name }, undefined, true);
    const svm = found?.body as KubeObject | undefined;
    if (!svm || hasTrueCondition(svm, MIGRATION_SUCCEEDED) || hasTrueCondition(svm, MIGRATION_FAILED)) return;
    const { group, resource } = migrationResource(svm);
    await this.deps.registry.prepare(tenant);
    const target = this.deps.registry.all(tenant).find((d) => d.group === group && d.resource === resource);
    if (!target) {
      const age = Date.now() - Date.parse(String(svm.metadata.creationTimestamp ?? ''));
      const grace = this.deps.notFoundGraceMs ?? NOT_FOUND_GRACE_MS;
      if (age < grace) {
        this.queue.addAfter(key, Math.max(grace - age, 100));
        return;
      }
      await this.setCondition(tenant, def, svm, MIGRATION_FAILED, 'resource not found');
      return;
    }
    const revision = String(await this.deps.objects.currentRevision(tenant));
    const running = await this.setCondition(tenant, def, svm, MIGRATION_RUNNING, '', revision);
    if (!running) return;
    try {
      const counts = await this.migrate(tenant, target, (c) => this.progress(tenant, def, running, c));
      await this.setCondition(tenant, def, running, MIGRATION_SUCCEEDED, `${counts.rewritten} of ${counts.checked} objects rewritten`);
      this.deps.logger.info({ tenant, migration: name, resource: target.storageResource, ...counts }, 'storage version migration done');
    } catch (err) {
      const message = (err as Error).message;
      this.deps.logger.warn({ tenant, migration: name, err: message }, 'storage version migration failed');
      await this.setCondition(tenant, def, running, MIGRATION_FAILED, `migration encountered unhandled error: ${message}`);
    }
  }

  /** Rewrites the stale objects of `target` in `tenant`; `onPage` is told the counts after each page. */
  private async migrate(tenant: string, target: ResourceDefinition, onPage: (c: MigrationCounts) => Promise<void>): Promise<MigrationCounts> {
    const counts: MigrationCounts = { checked: 0, rewritten: 0 };
    let after: ListCursor | undefined;
    for (;;) {
      const page = await this.deps.lists.list({ tenant, resource: target.storageResource, limit: PAGE, after });
      for (const item of page.items) {
        counts.checked++;
        if (await this.rewrite(target, item)) counts.rewritten++;
      }
      if (!page.next || !this.queue.active) break;
      after = page.next;
      await onPage(counts);
    }
    return counts;
  }

  /** Rewrites one object when it is stale; returns whether it was written. */
  private async rewrite(def: ResourceDefinition, item: StoredObject): Promise<boolean> {
    const current = await this.deps.objects.get(item.key, undefined, true);
    if (!current) return false;
    const body = current.body as KubeObject;
    const stored = await this.storedForm(def, body);
    if (stored.apiVersion === body.apiVersion && !current.stale) return false;
    try {
      await this.deps.objects.update(current.key, stored, current.revision);
      return true;
    } catch (err) {
      // Changed or deleted meanwhile: that write stored it in the current form.
      if (isStorageError(err, 'Conflict') || isStorageError(err, 'NotFound')) return false;
      throw err;
    }
  }

  /** A stored object (any version) in the storage version's form: the CRD's conversion webhook, or the pure conversions. */
  private async storedForm(def: ResourceDefinition, body: KubeObject): Promise<KubeObject> {
    if (def.custom?.remote) return (await def.custom.remote.toStoredBatch([body]))[0];
    return toStorage(def, fromStorage(def, body));
  }

  private lastProgress = 0;

  private async progress(tenant: string, def: ResourceDefinition, svm: KubeObject, c: MigrationCounts): Promise<void> {
    if (Date.now() - this.lastProgress < PROGRESS_EVERY_MS) return;
    this.lastProgress = Date.now();
    await this.setCondition(tenant, def, svm, MIGRATION_RUNNING, `${c.checked} objects checked, ${c.rewritten} rewritten`);
  }

  /**
   * Sets condition `type` True (Succeeded and Failed turn Running False),
   * and status.resourceVersion when given and unset, through the status
   * subresource. Returns the stored migration, or undefined when it is
   * gone or another uid.
   */
  private async setCondition(tenant: string, def: ResourceDefinition, svm: KubeObject, type: string, message: string, resourceVersion?: string): Promise<KubeObject | undefined> {
    const ctx: WriteContext = {
      tenant,
      def,
      namespace: '',
      subresource: 'status',
      user: CONTROLLER_USER,
      dryRun: false,
      options: { kind: 'UpdateOptions', apiVersion: 'meta.k8s.io/v1' },
      warnings: [],
      fieldManager: 'kube-controller-manager',
    };
    try {
      const { object } = await this.deps.store.update(
        ctx,
        svm.metadata.name ?? '',
        (o) => {
          if (o.metadata.uid !== svm.metadata.uid) throw ApiError.notFound({ group: def.group, kind: def.resource, name: svm.metadata.name ?? '' });
          withCondition(o, type, message, resourceVersion);
          return o;
        },
        storageVersionMigrationStatusStrategy,
      );
      return object;
    } catch (err) {
      if (err instanceof ApiError && err.code === 404) return undefined;
      throw err;
    }
  }
}

interface Condition {
  type: string;
  status: string;
  lastTransitionTime: string;
  reason: string;
  message: string;
}

/** Sets `type` True with upstream's reason (Running False once Succeeded or Failed); keeps transition times of unchanged statuses. Mutates `o`. */
function withCondition(o: KubeObject, type: string, message: string, resourceVersion?: string): void {
  const status = (o.status ??= {}) as { conditions?: Condition[]; resourceVersion?: string };
  if (resourceVersion && !status.resourceVersion) status.resourceVersion = resourceVersion;
  const now = rfc3339Now();
  const list = [...(status.conditions ?? [])];
  const put = (t: string, s: 'True' | 'False', msg: string) => {
    const i = list.findIndex((c) => c.type === t);
    const old = i >= 0 ? list[i] : undefined;
    const next: Condition = { type: t, status: s, lastTransitionTime: old && old.status === s ? old.lastTransitionTime : now, reason: REASON[t as keyof typeof REASON], message: msg };
    if (i >= 0) list[i] = next;
    else list.push(next);
  };
  if (type !== MIGRATION_RUNNING && list.some((c) => c.type === MIGRATION_RUNNING)) put(MIGRATION_RUNNING, 'False', list.find((c) => c.type === MIGRATION_RUNNING)?.message ?? '');
  put(type, 'True', message);
  status.conditions = list;
}
