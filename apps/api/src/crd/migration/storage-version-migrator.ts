import type { Logger } from 'pino';
import { ApiError, type KubeObject } from '@plinth/apimachinery';
import { isStorageError, type ListCursor, type Storage, type StoredObject } from '@plinth/storage';
import { toStorageForm, type ResourceDefinition } from '../../registry/resource-definition.js';
import type { ResourceStoreService } from '../../resource-store/resource-store.service.js';
import { forEachConcurrently } from '../../resource-store/bounded-concurrency.js';
import type { WriteContext } from '../../resource-store/write-context.js';
import { JobName, type JobPayloads } from '../../jobs/job-names.js';
import { OnJob } from '../../jobs/on-job.decorator.js';
import type { CrdRegistry } from '../crd-registry.service.js';
import { customResourceDefinitionResource } from '../../kinds/customresourcedefinition/crd.resource.js';
import { asCrd, type CrdObject, customResourceStorage, findCondition, isConditionTrue, setCondition, storageVersionOf } from '../../kinds/customresourcedefinition/crd-types.js';
import { crdStatusStrategy } from '../../kinds/customresourcedefinition/crd.strategy.js';

/**
 * Storage version migration (upstream's StorageVersionMigration idea, run
 * by the server itself): when a CRD's `status.storedVersions` holds more
 * than its storage version, every stored object of the CRD not in the
 * storage version is rewritten into it, through the CRD's conversion (its
 * webhook, or the apiVersion rewrite of strategy None), page by page: one
 * conversion call per page, each object written on its own conditionally
 * on the revision it was read at (no long transaction; an object written
 * meanwhile was stored in the storage version by that write and is left
 * alone). Progress is the CRD condition `StorageVersionMigrated` (False,
 * `Migrating`, with counts), and when every object is done
 * `status.storedVersions` becomes `[<storage version>]` and the condition
 * True (`Migrated`). Rewrites are system writes: no admission, as the
 * storage layer's own re-encoding upstream.
 */

/** The CRD condition that reports a migration. */
export const MIGRATION_CONDITION = 'StorageVersionMigrated';
/** Objects read (and converted in one call) per page. */
const PAGE = 500;
/** Rewrites in flight. */
const WRITES_IN_FLIGHT = 32;
/** At most one progress write per this many milliseconds. */
const PROGRESS_EVERY_MS = 1000;
/** A failed migration is tried again after this long (or at the CRD's next change). */
const RETRY_MS = 30_000;

const SYSTEM_USER = { username: 'system:apiserver', groups: ['system:masters'] };

/** What the migrator works with. */
export interface StorageVersionMigratorDeps {
  registry: CrdRegistry;
  lists: Storage;
  objects: Storage;
  store: ResourceStoreService;
  logger: Logger;
  /** Submits a run for `tenant` (the job queue). */
  submit: (tenant: string) => Promise<void>;
}

/** What one migration did. */
export interface MigrationOutcome {
  crd: string;
  storageVersion: string;
  checked: number;
  rewritten: number;
}

/** Whether `crd` has objects that may still be stored in another version than its storage version. */
export function needsMigration(crd: CrdObject): boolean {
  const storage = storageVersionOf(crd);
  if (!storage || crd.metadata.deletionTimestamp || !isConditionTrue(crd, 'Established')) return false;
  return (crd.status?.storedVersions ?? []).some((v) => v !== storage);
}

/** Which CRD a submission is for: one entry each in the submitted map. */
function crdKey(tenant: string, crd: CrdObject): string {
  return `${tenant}/${crd.metadata.uid}`;
}

/**
 * What identifies one needed migration of `crd`: its generation (every
 * storage version switch is a spec change, so v1 -> v2 -> v1 -> v2 gives
 * three) and its storedVersions (grown again by a status write).
 */
function submissionKey(crd: CrdObject): string {
  return `${crd.metadata.generation ?? 0}/${storageVersionOf(crd)}/${(crd.status?.storedVersions ?? []).join(',')}`;
}

/** Stopped because the CRD changed under the migration (a new run follows the change). */
class Superseded extends Error {}

/** See the file comment. One instance per replica; runs are submitted per tenant through the job queue. */
export class StorageVersionMigrator {
  /** Tenants due while a run is active on this replica (it takes them before it ends). */
  private readonly pending = new Set<string>();
  /**
   * The migration last submitted from this replica for each CRD (by tenant and
   * uid) that still needs one; an entry goes when its CRD no longer needs
   * migrating (done here or on another replica) or is gone, so the map holds
   * at most the CRDs with a migration outstanding.
   */
  private readonly submitted = new Map<string, string>();
  private active = false;
  private readonly retries = new Map<string, NodeJS.Timeout>();
  private stopped = false;

  constructor(private readonly deps: StorageVersionMigratorDeps) {}

  /**
   * Called with all of a tenant's CRDs whenever they change: submits a run
   * when one of them needs migrating in a way not submitted before (each
   * storage version switch once; again after a failure's retry delay), and
   * forgets the CRDs that no longer need one.
   */
  check(tenant: string, crds: CrdObject[]): void {
    if (this.stopped) return;
    const needing = crds.filter(needsMigration);
    const outstanding = new Set(needing.map((crd) => crdKey(tenant, crd)));
    for (const key of this.submitted.keys()) if (key.startsWith(`${tenant}/`) && !outstanding.has(key)) this.submitted.delete(key);
    let due = false;
    for (const crd of needing) {
      const key = submissionKey(crd);
      if (this.submitted.get(crdKey(tenant, crd)) === key) continue;
      this.submitted.set(crdKey(tenant, crd), key);
      due = true;
    }
    if (!due) return;
    // A run in progress on this replica takes the tenant before it ends; otherwise submit one.
    if (this.active) {
      this.pending.add(tenant);
      return;
    }
    // A submission not acknowledged (Redis down, or no replica took it) is tried again later.
    void this.deps.submit(tenant).catch((err: Error) => {
      this.deps.logger.warn({ tenant, err: (err as Error).message }, 'cannot submit storage version migration; trying again later');
      this.retryLater(tenant);
    });
  }

  /** The job's handler: {@link run} for the payload's tenant. */
  @OnJob(JobName.MigrateCrdStorage)
  async runJob(payload: JobPayloads[JobName.MigrateCrdStorage]): Promise<{ migrated: MigrationOutcome[] }> {
    return { migrated: await this.run(payload.tenant) };
  }

  /** One run: migrates every CRD of `tenant` that needs it, then those of any tenant that became due meanwhile. */
  async run(tenant: string): Promise<MigrationOutcome[]> {
    this.pending.add(tenant);
    this.active = true;
    const done: MigrationOutcome[] = [];
    try {
      while (this.pending.size > 0 && !this.stopped) {
        const next = this.pending.values().next().value as string;
        this.pending.delete(next);
        done.push(...(await this.migrateTenant(next)));
      }
    } finally {
      this.active = false;
    }
    return done;
  }

  /** Nest's shutdown hook: see {@link stop}. */
  onApplicationShutdown(): void {
    this.stop();
  }

  /** Stops submitting and retrying (server shutdown); a run in progress ends after its current page. */
  stop(): void {
    this.stopped = true;
    for (const t of this.retries.values()) clearTimeout(t);
    this.retries.clear();
  }

  private async migrateTenant(tenant: string): Promise<MigrationOutcome[]> {
    await this.deps.registry.refresh(tenant);
    const out: MigrationOutcome[] = [];
    for (const crd of this.deps.registry.crds(tenant).filter(needsMigration)) {
      try {
        const outcome = await this.migrate(tenant, crd);
        if (outcome) out.push(outcome);
      } catch (err) {
        if (err instanceof Superseded) continue;
        const message = err instanceof Error ? err.message : String(err);
        this.deps.logger.warn({ tenant, crd: crd.metadata.name, err: message }, 'storage version migration failed');
        await this.writeCondition(tenant, crd, 'False', 'MigrationFailed', `migration to ${storageVersionOf(crd)} failed: ${message}`).catch(() => undefined);
        this.retryLater(tenant);
      }
    }
    return out;
  }

  private retryLater(tenant: string): void {
    if (this.stopped || this.retries.has(tenant)) return;
    const t = setTimeout(() => {
      this.retries.delete(tenant);
      for (const key of [...this.submitted.keys()]) if (key.startsWith(`${tenant}/`)) this.submitted.delete(key);
      this.check(tenant, this.deps.registry.crds(tenant));
    }, RETRY_MS);
    t.unref();
    this.retries.set(tenant, t);
  }

  /** The served version the tenant's registry compiled for `crd` (any: all convert to the same storage version). */
  private definitionOf(tenant: string, crd: CrdObject): ResourceDefinition | undefined {
    const resource = customResourceStorage(crd);
    return this.deps.registry.definitions(tenant).find((d) => d.storageResource === resource);
  }

  /** Migrates one CRD; undefined when it cannot be served (no served version) and so cannot convert. */
  private async migrate(tenant: string, crd: CrdObject): Promise<MigrationOutcome | undefined> {
    const def = this.definitionOf(tenant, crd);
    const storage = storageVersionOf(crd)!;
    if (!def) return undefined;
    const target = `${crd.spec.group}/${storage}`;
    const name = crd.metadata.name ?? '';
    let checked = 0;
    let rewritten = 0;
    let after: ListCursor | undefined;
    let lastProgress = 0;
    let total: number | undefined;
    const progress = async (force: boolean) => {
      if (!force && Date.now() - lastProgress < PROGRESS_EVERY_MS) return;
      lastProgress = Date.now();
      const of = total !== undefined ? ` of ${total}` : '';
      await this.writeCondition(tenant, crd, 'False', 'Migrating', `migrating objects to ${storage}: ${checked}${of} checked, ${rewritten} rewritten`);
    };
    await progress(true);
    for (;;) {
      this.assertCurrent(tenant, crd);
      const page = await this.deps.lists.list({ tenant, resource: def.storageResource, limit: PAGE, after, countRemaining: total === undefined });
      if (total === undefined) total = page.items.length + (page.remaining ?? 0);
      rewritten += await this.rewritePage(def, page.items, target);
      checked += page.items.length;
      if (!page.next || this.stopped) break;
      after = page.next;
      await progress(false);
    }
    if (this.stopped) return undefined;
    await this.finish(tenant, crd, storage, `${rewritten} of ${checked} objects rewritten in ${storage}`);
    this.deps.logger.info({ tenant, crd: name, storageVersion: storage, checked, rewritten }, 'storage version migration done');
    return { crd: name, storageVersion: storage, checked, rewritten };
  }

  /** Rewrites the objects of one page not stored in `target` (one conversion call for them all); returns how many were written. */
  private async rewritePage(def: ResourceDefinition, items: StoredObject[], target: string): Promise<number> {
    const stale = items.filter((i) => (i.body as KubeObject).apiVersion !== target);
    if (stale.length === 0) return 0;
    const converted = await this.toStorage(def, stale.map((i) => i.body as KubeObject));
    let written = 0;
    await forEachConcurrently(
      stale.map((item, i) => ({ item, body: converted[i] })),
      WRITES_IN_FLIGHT,
      async ({ item, body }) => {
        try {
          await this.deps.objects.update(item.key, body, item.revision);
          written++;
        } catch (err) {
          // Changed or deleted meanwhile: that write stored it in the storage version already.
          if (isStorageError(err, 'Conflict') || isStorageError(err, 'NotFound')) return;
          throw err;
        }
      },
    );
    return written;
  }

  /** Stored objects of any version in the storage version's form: one webhook call for the batch, or apiVersion rewrites. */
  private async toStorage(def: ResourceDefinition, objs: KubeObject[]): Promise<KubeObject[]> {
    if (def.custom?.remote) return def.custom.remote.toStoredBatch(objs);
    return Promise.all(objs.map((o) => toStorageForm(def, o)));
  }

  /** Throws Superseded when the CRD was deleted, replaced or given another storage version since the run began. */
  private assertCurrent(tenant: string, crd: CrdObject): void {
    const now = this.deps.registry.crds(tenant).find((c) => c.metadata.name === crd.metadata.name);
    if (!now || now.metadata.uid !== crd.metadata.uid || now.metadata.deletionTimestamp || storageVersionOf(now) !== storageVersionOf(crd)) throw new Superseded();
  }

  private ctx(tenant: string): WriteContext {
    return {
      tenant,
      def: customResourceDefinitionResource,
      namespace: '',
      subresource: 'status',
      user: SYSTEM_USER,
      dryRun: false,
      options: { kind: 'UpdateOptions', apiVersion: 'meta.k8s.io/v1' },
      warnings: [],
      fieldManager: 'kube-apiserver',
    };
  }

  /** Updates the CRD's status with `mutate` unless the CRD is no longer the one migrated (then Superseded). */
  private async writeStatus(tenant: string, crd: CrdObject, mutate: (c: CrdObject) => void): Promise<void> {
    try {
      await this.deps.store.update(
        this.ctx(tenant),
        crd.metadata.name ?? '',
        (cur) => {
          const c = asCrd(cur);
          if (c.metadata.uid !== crd.metadata.uid || storageVersionOf(c) !== storageVersionOf(crd)) throw new Superseded();
          mutate(c);
          return c;
        },
        crdStatusStrategy,
      );
    } catch (err) {
      if (err instanceof ApiError && err.code === 404) throw new Superseded();
      throw err;
    }
  }

  private async writeCondition(tenant: string, crd: CrdObject, status: 'True' | 'False', reason: string, message: string): Promise<void> {
    await this.writeStatus(tenant, crd, (c) => {
      const cur = findCondition(c, MIGRATION_CONDITION);
      if (cur && cur.status === status && cur.reason === reason && cur.message === message) return;
      setCondition(c, { type: MIGRATION_CONDITION, status, reason, message });
    });
  }

  /** The end of a migration: storedVersions is the storage version alone, and the condition True. */
  private async finish(tenant: string, crd: CrdObject, storage: string, message: string): Promise<void> {
    await this.writeStatus(tenant, crd, (c) => {
      c.status ??= {};
      c.status.storedVersions = [storage];
      setCondition(c, { type: MIGRATION_CONDITION, status: 'True', reason: 'Migrated', message });
    });
  }
}
