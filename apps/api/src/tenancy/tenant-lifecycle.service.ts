import type { Logger } from 'pino';
import { isStorageError, type Storage, type TenantRepository } from '@plinth/storage';
import { ApiError, isPlainObject, type KubeObject, rfc3339Now } from '@plinth/apimachinery';
import { ResourceStoreService } from '../resource-store/resource-store.service.js';
import { systemWriteContext, type WriteContext } from '../resource-store/write-context.js';
import { PLATFORM_TENANT, SNAPSHOT_CONDITION, SOURCE_CONDITION, TENANT_FINALIZER, type TenantCondition, type TenantObject, type TenantOwner } from '../kinds/tenant/tenant-api.js';
import type { TenantDeletionRunner } from './tenant-deletion.runner.js';
import { usageStatus } from './tenant-limits.js';
import { isDeepStrictEqual } from 'node:util';
import type { TenantProvisioner } from './tenant-provisioner.js';
import { tenantResource } from '../kinds/tenant/tenant.resource.js';
import type { ControllerManager } from '../controllers/controller-manager.js';
import { every, InformerController, type KeySource, onInformer } from '../controllers/informer-controller.js';
import type { SharedInformer } from '../controllers/shared-informer.js';
import type { TenantDirectory } from '../sharding/tenant-directory.js';
import { moveAsked } from '../sharding/tenant-leftover-sweep.js';

/** How often the tenant controller looks for tenants to finish provisioning or deleting. */
export const TENANT_RECONCILE_INTERVAL_MS = 5000;

/** Dependencies of {@link TenantLifecycleService}. */
export interface TenantLifecycleDeps {
  tenants: TenantRepository;
  objects: Storage;
  /** Lists the Tenants at start-up, on every replica (the informer runs only where the controller does). */
  lists: Storage;
  /** The Tenant objects (the platform tenant's; the shared informer the controller reads from). */
  tenantObjects: SharedInformer;
  store: ResourceStoreService;
  provisioner: TenantProvisioner;
  deletion: TenantDeletionRunner;
  logger: Logger;
  /** Gives the controller its work queue. */
  queues: Pick<ControllerManager, 'queue'>;
  /** Where tenants live: told of a new Tenant before it is provisioned, so its rows go to its shard. */
  directory: Pick<TenantDirectory, 'apply'>;
}

/** Conditions other controllers own, kept by every status this one writes. */
const KEPT_CONDITIONS = new Set(['Moving', 'Moved', SNAPSHOT_CONDITION, SOURCE_CONDITION]);

/** The queue key of the reconcile pass (other keys are `delete\u0000<tenant>`). */
const RECONCILE = 'reconcile';
const deleteKey = (name: string): string => `delete\u0000${name}`;

function ownersOf(t: TenantObject): TenantOwner[] {
  return Array.isArray(t.spec?.owners) ? t.spec.owners.filter((o) => isPlainObject(o)) : [];
}

function condition(t: TenantObject, type: string, status: TenantCondition['status'], reason: string, message: string): TenantCondition {
  const old = t.status?.conditions?.find((c) => c.type === type);
  const lastTransitionTime = old && old.status === status ? old.lastTransitionTime : rfc3339Now();
  return { type, status, reason, message, lastTransitionTime, observedGeneration: t.metadata.generation };
}

/**
 * Drives Tenant objects to their logical clusters: provisions a new or
 * changed Tenant (synchronously in its create request, so the tenant is
 * usable when `kubectl create` returns), and on deletion marks the tenant
 * Terminating; the tenant controller (a controller of the ControllerManager:
 * one replica runs it, reading Tenants from the shared informer) removes
 * everything in it, then lets the Tenant go by removing its finalizer, and
 * its periodic reconcile completes whatever a crash or an error
 * interrupted; every step is idempotent.
 */
export class TenantLifecycleService extends InformerController {
  private baseUrl = '';

  constructor(private readonly deps: TenantLifecycleDeps) {
    super({ name: 'tenant-controller', workers: 4, queues: deps.queues });
  }

  /** A Tenant being deleted; the reconcile pass every few seconds (and at start). */
  protected sources(): KeySource[] {
    return [
      onInformer(this.deps.tenantObjects, (e) => (e.type !== 'delete' && (e.object.body as KubeObject).metadata?.deletionTimestamp ? deleteKey(e.object.key.name) : undefined)),
      every(TENANT_RECONCILE_INTERVAL_MS, () => RECONCILE),
    ];
  }

  protected reconcile(key: string): Promise<void> {
    return key === RECONCILE ? this.reconcileOnce(true) : this.finishDeletion(key.slice(deleteKey('').length));
  }

  /** The server's URL, from which each tenant's status.url is derived. Set before `start`. */
  setBaseUrl(url: string): void {
    this.baseUrl = url.replace(/\/+$/, '');
  }

  /** The URL of `name`'s logical cluster. */
  urlOf(name: string): string {
    return name === PLATFORM_TENANT ? this.baseUrl : `${this.baseUrl}/clusters/${name}`;
  }

  /**
   * Start-up, on every replica: makes sure a Tenant object exists for the
   * platform tenant, for each of `names` (PLINTH_TENANTS) and for every
   * logical cluster that has none (created before Tenants were objects),
   * and provisions the tenants not ready yet.
   */
  async provisionAtStart(names: string[]): Promise<void> {
    const existing = new Set(await this.deps.tenants.list());
    const wanted = new Set([PLATFORM_TENANT, ...names, ...existing]);
    for (const name of wanted) {
      const row = await this.deps.tenants.get(name);
      if (row?.phase === 'Terminating') continue;
      // Only a logical cluster from before Tenant objects (its row has no object uid) gets one here: rows made for a
      // Tenant that is gone, or found on a shard the name does not live on, are leftovers (the mover's sweep removes them).
      if (name !== PLATFORM_TENANT && !names.includes(name) && (!row || row.objectUid != null)) continue;
      await this.ensureObject(name);
    }
    await this.reconcileOnce(false);
  }

  private async ensureObject(name: string): Promise<void> {
    const ctx = systemWriteContext(PLATFORM_TENANT, tenantResource);
    try {
      await this.deps.store.create(ctx, { apiVersion: 'tenancy.plinth.dev/v1alpha1', kind: 'Tenant', metadata: { name }, spec: {} });
    } catch (err) {
      if (!(err instanceof ApiError && err.code === 409)) throw err;
    }
  }

  /** Hook after a Tenant is created: provisions it and answers with its new status. Never throws. */
  readonly afterCreate = async (_ctx: WriteContext, created: KubeObject): Promise<KubeObject> => {
    this.deps.directory.apply('ADDED', created);
    try {
      return await this.provision(created as TenantObject);
    } catch (err) {
      this.deps.logger.warn({ tenant: created.metadata.name, err: (err as Error).message }, 'tenant provisioning failed; will retry');
      return created;
    }
  };

  /** Hook after a Tenant is updated: provisions it again when its spec changed (owners). Never throws. */
  readonly afterUpdate = async (ctx: WriteContext, updated: KubeObject): Promise<KubeObject> => {
    const t = updated as TenantObject;
    if (t.metadata.deletionTimestamp || this.isReady(t)) return updated;
    return this.afterCreate(ctx, updated);
  };

  /** True when the Tenant is Active and provisioned for its current generation. */
  private isReady(t: TenantObject): boolean {
    return t.status?.phase === 'Active' && (t.status.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True' && c.observedGeneration === t.metadata.generation);
  }

  /** Hook when deletion of a Tenant is requested: marks it Terminating; the controller removes its content. Never throws. */
  readonly deletionRequested = async (_ctx: WriteContext, object: KubeObject): Promise<KubeObject> => {
    const name = object.metadata.name!;
    try {
      const updated = await this.markTerminating(name);
      this.queue.add(deleteKey(name));
      return updated ?? object;
    } catch (err) {
      this.deps.logger.warn({ tenant: name, err: (err as Error).message }, 'tenant deletion could not start; will retry');
      return object;
    }
  };

  /** Storage refuses the tenant's writes from now on, and its status says Terminating. */
  private async markTerminating(name: string): Promise<TenantObject | undefined> {
    await this.deps.tenants.markTerminating(name);
    const current = await this.deps.objects.get(ResourceStoreService.key(PLATFORM_TENANT, tenantResource, '', name), { internal: true });
    const t = current?.body as TenantObject | undefined;
    // Written only when it changes: the controller hears of its own writes.
    if (!t || t.status?.phase === 'Terminating') return t;
    return this.setStatus(name, (cur) => this.terminatingStatus(cur));
  }

  /** Provisions `tenant` and records the outcome in its status; returns the updated object. */
  private async provision(tenant: TenantObject): Promise<TenantObject> {
    const name = tenant.metadata.name!;
    const outcome = await this.deps.provisioner.provision(name, ownersOf(tenant), tenant.spec?.limits, tenant.metadata.uid);
    const usage = outcome === 'ready' ? usageStatus(await this.deps.tenants.usage(name)) : undefined;
    const updated = await this.setStatus(name, (t) =>
      outcome === 'ready'
        ? { phase: 'Active', url: this.urlOf(name), usage, conditions: [condition(t, 'Ready', 'True', 'Provisioned', 'the logical cluster is ready')] }
        : {
            phase: 'Initializing',
            url: this.urlOf(name),
            conditions: [condition(t, 'Ready', 'False', 'PreviousTenantTerminating', 'a deleted tenant of the same name is still being removed')],
          },
    );
    return updated ?? tenant;
  }

  /** Writes the tenant's current usage into `status.usage` when it changed (storage keeps the counts exact; this is their report). */
  private async refreshUsage(t: TenantObject): Promise<void> {
    const name = t.metadata.name!;
    const usage = usageStatus(await this.deps.tenants.usage(name));
    if (isDeepStrictEqual(t.status?.usage, usage)) return;
    await this.setStatus(name, (cur) => ({ ...cur.status, usage }));
  }

  private terminatingStatus(t: TenantObject): TenantObject['status'] {
    return {
      phase: 'Terminating',
      url: this.urlOf(t.metadata.name!),
      conditions: [condition(t, 'Ready', 'False', 'Terminating', 'the tenant and everything in it are being deleted')],
    };
  }

  /** Writes `status` of the Tenant when it differs; returns the stored object, or undefined when the Tenant is gone. */
  private async setStatus(name: string, build: (t: TenantObject) => TenantObject['status']): Promise<TenantObject | undefined> {
    // Where the tenant lives is the shards' business (placement, moves): every status written here keeps it,
    // and the conditions moves report; so are what snapshots report (the snapshot scheduler's, the restore from spec.source).
    const status = (t: TenantObject): TenantObject['status'] => {
      const next = build(t);
      if (!next) return next;
      const { shard, shardResourceVersion, moveGeneration, snapshots } = t.status ?? {};
      const own = new Set((next.conditions ?? []).map((c) => c.type));
      const kept = (t.status?.conditions ?? []).filter((c) => !own.has(c.type) && KEPT_CONDITIONS.has(c.type));
      return {
        ...next,
        ...(snapshots !== undefined && next.snapshots === undefined ? { snapshots } : {}),
        ...(shard !== undefined && next.shard === undefined ? { shard } : {}),
        ...(shardResourceVersion !== undefined && next.shardResourceVersion === undefined ? { shardResourceVersion } : {}),
        ...(moveGeneration !== undefined && next.moveGeneration === undefined ? { moveGeneration } : {}),
        ...(kept.length > 0 ? { conditions: [...(next.conditions ?? []), ...kept] } : {}),
      };
    };
    // An unchanged status is not written again (a reconcile meeting a tenant its create request is provisioning must not
    // bump its resourceVersion under a client that just read it).
    const current = await this.deps.objects.get(ResourceStoreService.key(PLATFORM_TENANT, tenantResource, '', name), { internal: true });
    if (!current) return undefined;
    const t = current.body as TenantObject;
    if (isDeepStrictEqual(t.status, status(t))) return t;
    try {
      return (await this.deps.store.systemUpdate(systemWriteContext(PLATFORM_TENANT, tenantResource), name, (o) => {
        o.status = status(o as TenantObject);
      })) as TenantObject;
    } catch (err) {
      if (err instanceof ApiError && err.code === 404) return undefined;
      throw err;
    }
  }

  /** Removes the tenant's content, then its Tenant object (if it is the deleted one). */
  private async finishDeletion(name: string): Promise<void> {
    const current = this.deps.tenantObjects.get(PLATFORM_TENANT, '', name);
    if (current && (current.body as KubeObject).metadata.deletionTimestamp) await this.markTerminating(name);
    // A move of the tenant ends first (the tenant mover rolls it back or cancels it, and its write of the Tenant queues this again).
    if (current && moveAsked(current.body as TenantObject)) return;
    await this.deps.deletion.run(name);
    await this.releaseFinalizer(name);
  }

  private async releaseFinalizer(name: string): Promise<void> {
    const key = ResourceStoreService.key(PLATFORM_TENANT, tenantResource, '', name);
    const current = await this.deps.objects.get(key, { internal: true });
    if (!current || !(current.body as KubeObject).metadata.deletionTimestamp) return;
    const ctx = systemWriteContext(PLATFORM_TENANT, tenantResource);
    try {
      const stored = await this.deps.store.systemUpdate(ctx, name, (o) => {
        o.metadata.finalizers = (o.metadata.finalizers ?? []).filter((f) => f !== TENANT_FINALIZER);
      });
      if ((stored.metadata.finalizers ?? []).length === 0) await this.deps.objects.delete(key, Number(stored.metadata.resourceVersion));
    } catch (err) {
      if (err instanceof ApiError && err.code === 404) return;
      if (isStorageError(err, 'NotFound') || isStorageError(err, 'Conflict')) return;
      throw err;
    }
  }

  /**
   * One pass over every Tenant: provisions those not ready and refreshes
   * their usage; with `deletions` (the controller, which reads the Tenants
   * from its informer; start-up lists them), queues the deletion of deleting
   * ones and of terminating logical clusters whose Tenant is gone.
   */
  private async reconcileOnce(deletions: boolean): Promise<void> {
    const items = deletions
      ? this.deps.tenantObjects.list(PLATFORM_TENANT)
      : (await this.deps.lists.list({ tenant: PLATFORM_TENANT, resource: tenantResource.storageResource })).items;
    const withObject = new Set<string>();
    for (const item of items) {
      const t = item.body as TenantObject;
      const name = t.metadata.name!;
      withObject.add(name);
      if (t.metadata.deletionTimestamp) {
        if (deletions) this.queue.add(deleteKey(name));
        continue;
      }
      if (!this.isReady(t)) await this.afterCreate(systemWriteContext(PLATFORM_TENANT, tenantResource), t);
      else if (deletions) await this.refreshUsage(t);
    }
    if (!deletions) return;
    // A logical cluster whose Tenant was removed early (its finalizer taken off by hand) is still emptied.
    for (const name of await this.deps.tenants.list()) {
      if (withObject.has(name)) continue;
      if ((await this.deps.tenants.get(name))?.phase === 'Terminating') this.queue.add(deleteKey(name));
    }
  }
}
