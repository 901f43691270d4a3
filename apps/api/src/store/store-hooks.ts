import { Injectable } from '@nestjs/common';
import type { KubeObject } from '@plinth/apimachinery';
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

/** Told that the last object of `namespace` in `tenant` may have gone (an update removed an object whose last finalizer went). */
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

  /** Adds a listener for objects removed by an update (their last finalizer gone). */
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

  /** Tells every listener that an object of `namespace` was removed by an update. */
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
