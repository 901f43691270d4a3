import { Injectable } from '@nestjs/common';
import type { KubeObject } from '@plinth/apimachinery';
import type { ObjectKey } from '@plinth/storage';
import type { WriteContext } from './write-context.js';

/**
 * Runs after an object is stored by a create or an update that changed it
 * (never on dry run), with the stored object; resolves with what the client
 * is answered. Must not throw: failures are the hook's to log and retry
 * (the object is already stored).
 */
export type AfterWriteHook = (ctx: WriteContext, stored: KubeObject) => Promise<KubeObject>;

/**
 * Runs when an object with finalizers is asked to be deleted (each time, also
 * when it already was; never on dry run), with the object as it now is;
 * resolves with what the client is answered. Must not throw.
 */
export type DeletionRequestedHook = (ctx: WriteContext, object: KubeObject) => Promise<KubeObject>;

/**
 * Resolves once this replica serves a committed write of `key` the way the
 * kind's controller settles it (after the change stream applied it); bounded.
 */
export type SettledHook = (key: ObjectKey) => Promise<void>;

/**
 * Deletes an object of a kind whose deletion is its own (upstream's
 * namespace REST: Terminating first, removed once emptied), in place of the
 * generic finalizers-and-remove, once preconditions and admission passed;
 * `current` is the stored object at `revision`. Resolves with the object and
 * whether it is gone, as the generic delete.
 */
export type KindDeleteHook = (ctx: WriteContext, name: string, current: KubeObject, revision: number) => Promise<{ object: KubeObject; deleted: boolean }>;

/** Told that the last object of `namespace` in `tenant` may have gone (a delete removed one, or an update removed one whose last finalizer went). */
export type ObjectRemovedListener = (tenant: string, namespace: string) => Promise<void>;

/** Told (not awaited) that namespace `name` of `tenant` entered deletion. */
export type NamespaceTerminatingListener = (tenant: string, name: string) => void;

/**
 * The generic store's per-kind hooks, as upstream's registry Store has
 * AfterCreate/AfterUpdate/AfterDelete: the module that owns a kind
 * registers its hooks here at construction; the store and the deleter
 * call them. One hook per kind and phase: a second registration is a
 * wiring error and fails start-up.
 */
@Injectable()
export class StoreHooks {
  private readonly afterCreateHooks = new Map<string, AfterWriteHook>();
  private readonly afterUpdateHooks = new Map<string, AfterWriteHook>();
  private readonly deletionHooks = new Map<string, DeletionRequestedHook>();
  private readonly settledHooks = new Map<string, SettledHook>();
  private readonly kindDeleteHooks = new Map<string, KindDeleteHook>();
  private readonly removedListeners: ObjectRemovedListener[] = [];
  private readonly terminatingListeners: NamespaceTerminatingListener[] = [];

  /** Registers what runs after creates and changing updates of `storageResource`. */
  afterWrite(storageResource: string, hook: AfterWriteHook): void {
    register(this.afterCreateHooks, 'afterCreate', storageResource, hook);
    register(this.afterUpdateHooks, 'afterUpdate', storageResource, hook);
  }

  /** Registers what runs after creates of `storageResource` only. */
  afterCreate(storageResource: string, hook: AfterWriteHook): void {
    register(this.afterCreateHooks, 'afterCreate', storageResource, hook);
  }

  /** Registers what runs after changing updates of `storageResource` only. */
  afterUpdate(storageResource: string, hook: AfterWriteHook): void {
    register(this.afterUpdateHooks, 'afterUpdate', storageResource, hook);
  }

  /** Registers what runs when deletion of a finalized object of `storageResource` is requested. */
  onDeletionRequested(storageResource: string, hook: DeletionRequestedHook): void {
    register(this.deletionHooks, 'deletionRequested', storageResource, hook);
  }

  /** Registers how objects of `storageResource` are deleted, in place of the generic deletion. */
  deleteWith(storageResource: string, hook: KindDeleteHook): void {
    register(this.kindDeleteHooks, 'deleteWith', storageResource, hook);
  }

  /**
   * Registers what a committed write of `storageResource` (a kind every
   * replica caches) waits for after the change stream applied it, before it
   * is answered: read-your-writes for what a controller settles at once (a
   * CRD's names accepted or refused).
   */
  untilSettled(storageResource: string, hook: SettledHook): void {
    register(this.settledHooks, 'untilSettled', storageResource, hook);
  }

  /** Adds a listener for namespaced objects removed (deleted, or their last finalizer gone). */
  onObjectRemoved(listener: ObjectRemovedListener): void {
    this.removedListeners.push(listener);
  }

  /** Adds a listener for namespaces entering deletion. */
  onNamespaceTerminating(listener: NamespaceTerminatingListener): void {
    this.terminatingListeners.push(listener);
  }

  /** The after-create hook of `storageResource`, if any. */
  createdHook(storageResource: string): AfterWriteHook | undefined {
    return this.afterCreateHooks.get(storageResource);
  }

  /** The after-update hook of `storageResource`, if any. */
  updatedHook(storageResource: string): AfterWriteHook | undefined {
    return this.afterUpdateHooks.get(storageResource);
  }

  /** The deletion-requested hook of `storageResource`, if any. */
  deletionHook(storageResource: string): DeletionRequestedHook | undefined {
    return this.deletionHooks.get(storageResource);
  }

  /** How objects of `storageResource` are deleted when not generically, if so. */
  kindDeleteHook(storageResource: string): KindDeleteHook | undefined {
    return this.kindDeleteHooks.get(storageResource);
  }

  /** The settled hook of `storageResource`, if any. */
  settledHook(storageResource: string): SettledHook | undefined {
    return this.settledHooks.get(storageResource);
  }

  /** Tells every listener that an object of `namespace` was removed. */
  async objectRemoved(tenant: string, namespace: string): Promise<void> {
    for (const l of this.removedListeners) await l(tenant, namespace);
  }

  /** Tells every listener that a namespace entered deletion; false when nobody listens (the caller then empties it itself). */
  namespaceTerminating(tenant: string, name: string): boolean {
    for (const l of this.terminatingListeners) l(tenant, name);
    return this.terminatingListeners.length > 0;
  }
}

function register<H>(hooks: Map<string, H>, phase: string, storageResource: string, hook: H): void {
  if (hooks.has(storageResource)) throw new Error(`store hooks: a second ${phase} hook for ${storageResource}`);
  hooks.set(storageResource, hook);
}
