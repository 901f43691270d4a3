import { ApiError, type KubeObject, rfc3339Now } from '@plinth/apimachinery';
import { isStorageError, type ObjectStoreRepository, type Storage } from '@plinth/storage';
import { namespaceResource } from '../kinds/namespace/namespace.resource.js';
import { namespaceFinalizers } from '../kinds/namespace/namespace.strategy.js';
import type { ResourceRegistry } from '../registry/resource-registry.js';
import type { DeleteOutcome, ResourceDeleteService } from '../resource-store/resource-delete.service.js';
import { ResourceStoreService } from '../resource-store/resource-store.service.js';
import { mapStorageError } from '../resource-store/storage-errors.mapper.js';
import type { StoreHooks } from '../resource-store/store-hooks.js';
import type { WriteContext } from '../resource-store/write-context.js';
import { NamespacePurge, type PurgeOutcome } from './namespace-purge.js';

/** What namespace deletion needs. */
export interface NamespaceDeleterDeps {
  objects: ObjectStoreRepository;
  lists: Storage;
  store: ResourceStoreService;
  /** Deletes the namespace's contents, one object at a time (finalizers respected). */
  deleter: ResourceDeleteService;
  registry: ResourceRegistry;
  hooks: StoreHooks;
}

/**
 * The namespace kind's own deletion, registered with the generic deleter
 * through {@link StoreHooks} when constructed: a DELETE marks the namespace
 * Terminating and tells the namespace controller (when one listens) to
 * empty it in the background (without a listener the DELETE empties it
 * itself); an object removed from a Terminating namespace may leave it
 * empty, and it is finalized then.
 */
export class NamespaceDeleter {
  private readonly purge: NamespacePurge;
  private readonly purging = new Set<string>();

  constructor(private readonly deps: NamespaceDeleterDeps) {
    this.purge = new NamespacePurge({ objects: deps.objects, lists: deps.lists, store: deps.store, registry: deps.registry, deleteOne: (ctx, name, pre) => deps.deleter.delete(ctx, name, pre) });
    deps.hooks.deleteWith(namespaceResource.storageResource, (ctx, name, current, revision) => this.deleteNamespace(ctx, name, current, revision));
    deps.hooks.onObjectRemoved(async (tenant, namespace) => {
      if (namespace) await this.finalizeNamespaceIfEmpty(tenant, namespace);
    });
  }

  /**
   * Upstream's namespace DELETE: the first marks it Terminating (deletion
   * timestamp, phase) and hands it to the namespace controller; while
   * spec.finalizers or metadata.finalizers remain, a DELETE answers with the
   * namespace as it is; once both are empty, it is removed.
   */
  async deleteNamespace(ctx: WriteContext, name: string, old: KubeObject, revision: number): Promise<DeleteOutcome> {
    if (ctx.dryRun) return { object: old, deleted: false };
    if (!old.metadata.deletionTimestamp || namespaceFinalizers(old).length > 0 || (old.metadata.finalizers ?? []).length > 0) {
      const ns = old.metadata.deletionTimestamp
        ? old
        : await this.deps.store.systemUpdate(ctx, name, (o) => {
            o.status = { ...(o.status as object), phase: 'Terminating' };
            o.metadata.deletionTimestamp ??= rfc3339Now();
            o.metadata.deletionGracePeriodSeconds ??= 0;
          });
      await this.namespaceContentChanged(ctx.tenant, name);
      return { object: ns, deleted: false };
    }
    const key = ResourceStoreService.key(ctx.tenant, ctx.def, '', name);
    try {
      const gone = await this.deps.objects.delete(key, revision);
      return { object: gone.body as KubeObject, deleted: true };
    } catch (err) {
      if (isStorageError(err, 'NotFound')) throw ApiError.notFound({ group: '', kind: 'namespaces', name });
      return mapStorageError(err, ctx.def, name);
    }
  }

  /**
   * One pass of the namespace controller over a Terminating namespace (see
   * NamespacePurge): empties it and removes it once empty. Idempotent.
   */
  async purgeNamespace(tenant: string, name: string): Promise<PurgeOutcome> {
    return this.purge.run(tenant, name);
  }

  /**
   * A namespaced object was removed (or a namespace asked to be deleted):
   * when the namespace is being deleted, the controller looks at it again
   * (without a controller, the pass runs here).
   */
  async finalizeNamespaceIfEmpty(tenant: string, namespace: string): Promise<void> {
    const nsDef = this.deps.registry.lookup(tenant, '', 'v1', 'namespaces');
    if (!nsDef) return;
    const current = await this.deps.objects.get(ResourceStoreService.key(tenant, nsDef, '', namespace), { internal: true });
    if (!current || !(current.body as KubeObject).metadata.deletionTimestamp) return;
    await this.namespaceContentChanged(tenant, namespace);
  }

  private async namespaceContentChanged(tenant: string, name: string): Promise<void> {
    if (this.deps.hooks.namespaceTerminating(tenant, name)) return;
    // Inline, the pass's own deletes come back here: one pass per namespace at a time.
    const id = `${tenant}\u0000${name}`;
    if (this.purging.has(id)) return;
    this.purging.add(id);
    try {
      await this.purge.run(tenant, name);
    } finally {
      this.purging.delete(id);
    }
  }
}
