import { CorruptObjectError, isStorageError, type ObjectStoreRepository, type Storage } from '@plinth/storage';
import { ApiError, type KubeObject, rfc3339Now } from '@plinth/apimachinery';
import { fromStorageForm, type ResourceDefinition } from '../registry/resource-definition.js';
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
 * and the object stays until its finalizers are gone). A kind whose
 * deletion is its own (a namespace: Terminating, emptied, then removed; see
 * namespace/namespace-deleter.ts) registers it in {@link StoreHooks}.
 */
export class ResourceDeleteService {
  /**
   * `hooks` give the kinds' own deletions and deletion-requested hooks, and
   * are told when a namespaced object is removed (its namespace may be
   * waiting to be emptied).
   */
  constructor(
    private readonly objects: ObjectStoreRepository,
    private readonly store: ResourceStoreService,
    private readonly hooks: StoreHooks = new StoreHooks(),
  ) {}

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
      const own = this.hooks.kindDeleteHook(def.storageResource);
      if (own) return own(ctx, name, old, current.revision);
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

  /**
   * KEP-3926's unsafe delete (ignoreStoreReadErrorWithClusterBreakingPotential):
   * an object whose stored value cannot be read is removed as it is, without
   * admission, preconditions or finalizers, and its removal is recorded as
   * any delete's (watchers see it). A readable object takes the normal
   * path, as upstream tries the normal delete first.
   */
  async deleteIgnoringReadErrors(ctx: WriteContext, name: string): Promise<DeleteOutcome> {
    const { def } = ctx;
    const key = ResourceStoreService.key(ctx.tenant, def, ctx.namespace, name);
    try {
      await this.objects.get(key);
      return await this.delete(ctx, name);
    } catch (err) {
      if (!(err instanceof CorruptObjectError)) throw err;
    }
    try {
      const gone = await this.objects.delete(key, null);
      await this.store.synced(def, key, gone.revision);
      await this.afterContentDeleted(ctx);
      return { object: { apiVersion: '', kind: def.kind, ...gone.body, metadata: { name, ...(def.namespaced ? { namespace: ctx.namespace } : {}), ...(gone.body.metadata as object) } } as KubeObject, deleted: true };
    } catch (err) {
      if (isStorageError(err, 'NotFound')) throw ApiError.notFound({ group: def.group, kind: def.resource, name });
      return mapStorageError(err, def, name);
    }
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

  private async afterContentDeleted(ctx: WriteContext): Promise<void> {
    if (!ctx.def.namespaced || !ctx.namespace) return;
    await this.hooks.objectRemoved(ctx.tenant, ctx.namespace);
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
