import { type ObjectListRepository, type ObjectStoreRepository, isStorageError } from '@plinth/storage';
import { ApiError, rfc3339Now } from '@plinth/apimachinery';
import type { KubeObject } from '@plinth/apimachinery';
import { fromStorageForm, type ResourceDefinition } from '../registry/resource-definition.js';
import type { ResourceRegistry } from '../registry/resource-registry.js';
import { namespaceFinalizers } from '../kinds/namespace/namespace.strategy.js';
import { NamespacePurge, type PurgeOutcome } from './namespace-purge.js';
import { mapStorageError } from './storage-errors.mapper.js';
import { ResourceStoreService } from './resource-store.service.js';
import type { WriteContext } from './write-context.js';
import { StoreHooks } from './store-hooks.js';

/** Preconditions of a DeleteOptions. */
export interface DeletePreconditions {
  uid?: string;
  resourceVersion?: string;
  /**
   * What happens to dependents (objects whose ownerReferences name this one):
   * Background (default) deletes the owner now and the garbage collector its
   * dependents; Foreground keeps the owner (finalizer `foregroundDeletion`)
   * until its blocking dependents are gone; Orphan keeps it (finalizer
   * `orphan`) until the collector has removed it from its dependents'
   * ownerReferences.
   */
  propagation?: 'Foreground' | 'Background' | 'Orphan';
}

/** The finalizers of the Orphan and Foreground propagation policies, as upstream. */
export const ORPHAN_FINALIZER = 'orphan';
export const FOREGROUND_FINALIZER = 'foregroundDeletion';

/** The outcome of one delete. */
export interface DeleteOutcome {
  /** The deleted object, or (pending finalizers) the object as it now is. */
  object: KubeObject;
  /** False while finalizers keep the object. */
  deleted: boolean;
}

const MAX_ATTEMPTS = 16;

/**
 * Deletion: preconditions, admission, finalizers (deletionTimestamp is set
 * and the object stays until its finalizers are gone), and the namespace
 * cascade (Terminating, contents deleted, then the namespace removed).
 */
export class ResourceDeleteService {
  private readonly purge: NamespacePurge;
  private readonly purging = new Set<string>();

  /**
   * `hooks` give the kinds' deletion-requested hooks and tell the namespace
   * controller (when one listens) that a namespace entered deletion, to
   * empty it in the background; without a listener the DELETE empties it
   * itself. Objects removed by an update may leave a Terminating namespace
   * empty: this service finalizes it then.
   */
  constructor(
    private readonly objects: ObjectStoreRepository,
    lists: ObjectListRepository,
    private readonly store: ResourceStoreService,
    private readonly registry: ResourceRegistry,
    private readonly hooks: StoreHooks = new StoreHooks(),
  ) {
    this.purge = new NamespacePurge({ objects, lists, store, registry, deleteOne: (ctx, name, pre) => this.delete(ctx, name, pre) });
    hooks.onObjectRemoved(async (tenant, namespace) => {
      if (namespace) await this.finalizeNamespaceIfEmpty(tenant, namespace);
    });
  }

  /** Deletes one object. Throws ApiError NotFound / Conflict / admission errors. */
  async delete(ctx: WriteContext, name: string, pre: DeletePreconditions = {}): Promise<DeleteOutcome> {
    const { def } = ctx;
    const key = ResourceStoreService.key(ctx.tenant, def, ctx.namespace, name);
    const target = { group: def.group, kind: def.resource, name };
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const current = await this.objects.get(key);
      if (!current) throw ApiError.notFound(target);
      const old = current.body as KubeObject;
      checkPreconditions(def, name, old, pre);
      // Admission sees the object in the request's version (a CRD conversion webhook may be called), as upstream.
      const seen = await fromStorageForm(def, old);
      await this.store.runMutating(ctx, 'DELETE', null, seen);
      await this.store.runValidating(ctx, 'DELETE', null, seen);
      if (def.resource === 'namespaces' && def.group === '') return this.deleteNamespace(ctx, name, old, current.revision);
      const finalizer = pre.propagation === 'Orphan' ? ORPHAN_FINALIZER : pre.propagation === 'Foreground' ? FOREGROUND_FINALIZER : undefined;
      if (finalizer && !ctx.dryRun && !old.metadata.deletionTimestamp) {
        // The collector finishes the deletion once it has orphaned or deleted the dependents.
        const marked = await this.store.systemUpdate(ctx, name, (o) => {
          o.metadata.finalizers = [...new Set([...(o.metadata.finalizers ?? []), finalizer])];
          o.metadata.deletionTimestamp ??= rfc3339Now();
          o.metadata.deletionGracePeriodSeconds ??= 0;
        });
        return this.markDeleting(ctx, name, marked);
      }
      if ((old.metadata.finalizers ?? []).length > 0) return this.markDeleting(ctx, name, old);
      if (ctx.dryRun) return { object: old, deleted: true };
      try {
        const gone = await this.objects.delete(key, current.revision);
        await this.store.synced(def, key, gone.revision);
        await this.afterContentDeleted(ctx);
        return { object: gone.body as KubeObject, deleted: true };
      } catch (err) {
        if (isStorageError(err, 'Conflict') && !pre.resourceVersion) continue;
        if (isStorageError(err, 'NotFound')) throw ApiError.notFound(target);
        mapStorageError(err, def, name);
      }
    }
    throw ApiError.staleConflict(target);
  }

  private async markDeleting(ctx: WriteContext, name: string, old: KubeObject): Promise<DeleteOutcome> {
    const object = old.metadata.deletionTimestamp
      ? old
      : await this.store.systemUpdate(ctx, name, (o) => {
          o.metadata.deletionTimestamp ??= rfc3339Now();
          o.metadata.deletionGracePeriodSeconds ??= 0;
        });
    const hook = ctx.dryRun ? undefined : this.hooks.deletionHook(ctx.def.storageResource);
    return { object: hook ? await hook(ctx, object) : object, deleted: false };
  }

  /**
   * Upstream's namespace DELETE: the first marks it Terminating (deletion
   * timestamp, phase) and hands it to the namespace controller; while
   * spec.finalizers or metadata.finalizers remain, a DELETE answers with the
   * namespace as it is; once both are empty, it is removed.
   */
  private async deleteNamespace(ctx: WriteContext, name: string, old: KubeObject, revision: number): Promise<DeleteOutcome> {
    if (ctx.dryRun) return { object: old, deleted: false };
    if (!old.metadata.deletionTimestamp || namespaceFinalizers(old).length > 0 || (old.metadata.finalizers ?? []).length > 0) {
      const ns = old.metadata.deletionTimestamp
        ? old
        : await this.store.systemUpdate(ctx, name, (o) => {
            o.status = { ...(o.status as object), phase: 'Terminating' };
            o.metadata.deletionTimestamp ??= rfc3339Now();
            o.metadata.deletionGracePeriodSeconds ??= 0;
          });
      await this.namespaceContentChanged(ctx.tenant, name);
      return { object: ns, deleted: false };
    }
    const key = ResourceStoreService.key(ctx.tenant, ctx.def, '', name);
    try {
      const gone = await this.objects.delete(key, revision);
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
    const nsDef = this.registry.lookup(tenant, '', 'v1', 'namespaces');
    if (!nsDef) return;
    const current = await this.objects.get(ResourceStoreService.key(tenant, nsDef, '', namespace), undefined, true);
    if (!current || !(current.body as KubeObject).metadata.deletionTimestamp) return;
    await this.namespaceContentChanged(tenant, namespace);
  }

  private async namespaceContentChanged(tenant: string, name: string): Promise<void> {
    if (this.hooks.namespaceTerminating(tenant, name)) return;
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

  private async afterContentDeleted(ctx: WriteContext): Promise<void> {
    if (!ctx.def.namespaced || !ctx.namespace) return;
    await this.finalizeNamespaceIfEmpty(ctx.tenant, ctx.namespace);
  }
}

function checkPreconditions(def: ResourceDefinition, name: string, obj: KubeObject, pre: DeletePreconditions): void {
  const target = { group: def.group, kind: def.resource, name };
  if (pre.uid !== undefined && pre.uid !== obj.metadata.uid) {
    throw ApiError.conflict(target, `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${obj.metadata.uid}`);
  }
  if (pre.resourceVersion !== undefined && pre.resourceVersion !== obj.metadata.resourceVersion) {
    throw ApiError.conflict(
      target,
      `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in meta: ${obj.metadata.resourceVersion}`,
    );
  }
}
