import type { Logger } from 'pino';
import { ApiError, type KubeObject } from '@plinth/apimachinery';
import type { CachedChange, ListCursor, Storage } from '@plinth/storage';
import type { ControllerManager } from '../controllers/controller-manager.js';
import { every, InformerController, type KeySource, onChanges } from '../controllers/informer-controller.js';
import type { FollowResource } from '../controllers/shared-informer.js';
import type { CrdRegistry } from '../crd/crd-registry.service.js';
import { apiBindingResource } from '../kinds/apis/apis.resource.js';
import { APIBINDING_CLEANUP_FINALIZER, APIBINDING_STORAGE_RESOURCE } from '../kinds/apis/apis.schema.js';
import type { ResourceDeleteService } from '../resource-store/resource-delete.service.js';
import type { ResourceStoreService } from '../resource-store/resource-store.service.js';
import { systemWriteContext } from '../resource-store/write-context.js';
import type { ApiSharingIndex } from './api-sharing-index.js';

/** What the cleanup of deleted bindings needs. */
export interface BindingCleanupDeps {
  /** The change feed of APIBindings (a binding marked for deletion queues it). */
  follow: FollowResource;
  index: ApiSharingIndex;
  crds: CrdRegistry;
  lists: Storage;
  deleter: ResourceDeleteService;
  /** Removes the finalizer from a binding once its objects are gone. */
  store: ResourceStoreService;
  logger: Logger;
  queues: Pick<ControllerManager, 'queue'>;
  /** How often every binding being deleted is queued again, from the index (default 10 s; also at start). */
  resyncMs?: number;
}

const SEP = '\u0000';
const PAGE = 500;
const RESYNC_MS = 10_000;
/** As upstream's CRD finalizer acts: the API server itself. */
const USER = { username: 'system:apiserver', uid: '', groups: ['system:masters', 'system:authenticated'] };

/** The key of an APIBinding being deleted that still carries the cleanup finalizer (`tenant, binding name`). */
function keyOf(c: CachedChange): string | undefined {
  if (c.type === 'DELETED') return undefined;
  const meta = (c.object as KubeObject).metadata;
  if (!meta?.deletionTimestamp || !(meta.finalizers ?? []).includes(APIBINDING_CLEANUP_FINALIZER)) return undefined;
  return [c.key.tenant, meta.name ?? ''].join(SEP);
}

/**
 * Finishes the deletion of APIBindings (upstream's CRD finalizer,
 * `customresourcecleanup.apiextensions.k8s.io`, for bindings): every
 * binding carries the finalizer `apibindingcleanup.apis.plinth.dev` (its
 * strategy adds it), so deleting one only sets its deletionTimestamp; this
 * controller then deletes the tenant's objects of each resource the
 * binding served (finalizers respected, the tenant's admission run as for
 * any delete) and removes the finalizer, which deletes the binding. The
 * resources the tenant serves again otherwise (another binding of them, a
 * CRD of its own) are kept. A controller of the ControllerManager (one
 * replica runs it), fed by the change stream and, at start and every
 * `resyncMs`, by every binding being deleted in the index: a deletion made
 * while no replica ran it, or cut short by a crash, is finished by the
 * next one that leads (docs/api-sharing.md). Bindings made before the
 * finalizer existed get it from the same resync (an update of each).
 */
export class BindingCleanupController extends InformerController {
  constructor(private readonly deps: BindingCleanupDeps) {
    super({ name: 'apibinding-cleanup', workers: 1, queues: deps.queues });
  }

  protected sources(): KeySource[] {
    return [
      onChanges(this.deps.follow, APIBINDING_STORAGE_RESOURCE, keyOf),
      every(this.deps.resyncMs ?? RESYNC_MS, () => {
        // The index loads on first use; until then the next resync finds the bindings.
        void this.deps.index.ready().catch(() => undefined);
        return this.deps.index.bindingsToFinalize().map((d) => [d.tenant, d.binding.name].join(SEP));
      }),
    ];
  }

  protected async reconcile(key: string): Promise<void> {
    const [tenant, name] = key.split(SEP);
    await this.deps.index.ready();
    const binding = this.deps.index.bindingOf(tenant, name);
    if (!binding) return;
    // A binding made before the finalizer existed: an update of it adds it (the strategy's ensureFinalizer).
    if (!binding.deleting && !binding.finalized) return this.touch(tenant, name);
    if (!binding.deleting || !binding.finalized) return;
    const exp = this.deps.index.exportOf(binding.ref.path, binding.ref.name);
    // What the binding served: its status, or (a binding deleted before its status was written) its export's resources.
    const bound = binding.bound.length > 0 ? binding.bound : (exp?.resources ?? []);
    let remaining = 0;
    // A pass that deleted objects is followed by one that finds none (or what finalizers still hold).
    for (let pass = 0; pass < 2; pass++) {
      remaining = 0;
      for (const r of bound) remaining += await this.deleteObjects(tenant, name, binding.ref.path, r.group, r.resource);
      if (remaining === 0) break;
    }
    // Finalizers hold some, or objects were created while they were deleted: look again later (the queue's backoff).
    if (remaining > 0) throw new Error(`${remaining} object(s) bound by APIBinding "${name}" in tenant "${tenant}" are still stored`);
    await this.removeFinalizer(tenant, name);
  }

  /** Deletes the tenant's objects of `group/resource` unless something else serves it there; returns how many were still stored. */
  private async deleteObjects(tenant: string, binding: string, provider: string, group: string, resource: string): Promise<number> {
    const other = this.deps.index.bindingFor(tenant, group, resource);
    if (other && other.name !== binding && !other.deleting) return 0;
    await this.deps.crds.prepare(tenant);
    if (this.deps.crds.crds(tenant).some((c) => c.spec.group === group && c.spec.names?.plural === resource)) return 0;
    await this.deps.crds.prepare(provider);
    const def = this.deps.crds.definitions(provider).find((d) => d.group === group && d.resource === resource);
    if (!def) {
      this.deps.logger.warn({ tenant, binding, group, resource, provider }, 'the provider no longer defines a resource of a deleted APIBinding: its objects stay stored');
      return 0;
    }
    let seen = 0;
    let after: ListCursor | undefined;
    do {
      const page = await this.deps.lists.list({ tenant, resource: def.storageResource, limit: PAGE, after });
      for (const item of page.items) {
        seen++;
        const ctx = { ...systemWriteContext(tenant, def, item.key.namespace), user: USER, options: { kind: 'DeleteOptions', apiVersion: 'meta.k8s.io/v1' } };
        try {
          await this.deps.deleter.delete(ctx, item.key.name, { uid: (item.body as KubeObject).metadata.uid });
        } catch (err) {
          if (!(err instanceof ApiError && (err.code === 404 || err.code === 409))) throw err;
        }
      }
      after = page.next;
    } while (after);
    // Done once a list finds none: what was deleted now (or waits for finalizers) is looked for again.
    return seen;
  }

  private removeFinalizer(tenant: string, name: string): Promise<void> {
    return this.update(tenant, name, (cur) => {
      cur.metadata.finalizers = (cur.metadata.finalizers ?? []).filter((f) => f !== APIBINDING_CLEANUP_FINALIZER);
      return cur;
    });
  }

  /** Writes the binding unchanged: the strategy adds the finalizer to a binding not being deleted. */
  private touch(tenant: string, name: string): Promise<void> {
    return this.update(tenant, name, (cur) => cur);
  }

  private async update(tenant: string, name: string, transform: (cur: KubeObject) => KubeObject): Promise<void> {
    const ctx = { ...systemWriteContext(tenant, apiBindingResource), user: USER, options: { kind: 'UpdateOptions', apiVersion: 'meta.k8s.io/v1' } };
    try {
      await this.deps.store.update(ctx, name, transform);
    } catch (err) {
      if (!(err instanceof ApiError && err.code === 404)) throw err;
    }
  }
}
