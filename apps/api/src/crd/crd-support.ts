import type { Logger } from 'pino';
import type { ChangeObserver, ObjectListRepository } from '@plinth/storage';
import type { ResourceRegistry } from '../registry/resource-registry.js';
import type { ResourceDeleteService } from '../store/resource-delete.service.js';
import type { ResourceStoreService } from '../store/resource-store.service.js';
import { CrdController } from './crd-controller.service.js';
import { CrdRegistry } from './crd-registry.service.js';
import { CRD_STORAGE_RESOURCE } from './crd-resource.js';
import { type CrdNames, type CrdObject, findCondition, isConditionTrue } from './crd-types.js';

/** CustomResourceDefinition support of one server instance: the CRD cache and the controller. */
export interface CrdSupport {
  cache: CrdRegistry;
  controller: CrdController;
  /** Starts following CRD changes on the change stream. */
  start(): void;
  /**
   * Resolves once this replica's CRD cache shows the CRD `name` settled:
   * gone, terminating, names refused, or Established (what the controller
   * does right after a create or a names change). Gives up after `timeoutMs`.
   */
  settled(tenant: string, name: string, timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

/** Subscribes an observer to the changes of one storage resource (WatchCache.observe); returns the unsubscribe function. */
export type ObserveChanges = (resource: string, observer: ChangeObserver) => () => void;

/** What CRD support needs from the rest of the server. */
export interface CrdSupportDeps {
  registry: ResourceRegistry;
  lists: ObjectListRepository;
  store: ResourceStoreService;
  deleter: ResourceDeleteService;
  logger: Logger;
  observe: ObserveChanges;
  /** The feature gates CRD schemas name, for the descriptions of gated fields (unset: none is described). */
  features?: {
    /** The stage of `gate` in `tenant`: the server's, else the tenant's own. */
    stage(tenant: string, gate: string): string | undefined;
    /** Loads the tenant's own gates. */
    prepare(tenant: string): Promise<void>;
    /** The storage resource of the tenant gates, whose changes recompile the tenant's CRDs. */
    storageResource: string;
  };
  /** Called when the kinds a tenant's CRDs serve changed (e.g. to type-check admission policies again). */
  onServedChange?: (tenant: string) => void;
}

/** Wires the CRD cache into `registry`, onto the change stream, and the controller onto the cache. */
export function createCrdSupport(deps: CrdSupportDeps): CrdSupport {
  const cache = new CrdRegistry(deps.lists, { logger: deps.logger, featureStage: deps.features?.stage, prepareFeatures: deps.features?.prepare });
  const controller = new CrdController({ registry: cache, store: deps.store, deleter: deps.deleter, lists: deps.lists, logger: deps.logger });
  cache.onChange = (tenant) => controller.enqueue(tenant);
  cache.onServedChange = deps.onServedChange;
  deps.registry.setDynamicSource(cache);
  let unobserve: (() => void) | undefined;
  let unobserveGates: (() => void) | undefined;
  return {
    cache,
    controller,
    start: () => {
      unobserve ??= deps.observe(CRD_STORAGE_RESOURCE, cache.observer);
      if (deps.features) unobserveGates ??= deps.observe(deps.features.storageResource, cache.observer);
    },
    settled: async (tenant, name, timeoutMs = 2000) => {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        await cache.refresh(tenant);
        const crd = cache.crds(tenant).find((c) => c.metadata.name === name);
        if (!crd || isSettled(crd) || Date.now() >= deadline) return;
        await new Promise((r) => setTimeout(r, 10));
      }
    },
    stop: async () => {
      unobserve?.();
      unobserveGates?.();
      unobserve = undefined;
      unobserveGates = undefined;
      await controller.stop();
    },
  };
}

/** Nothing more for the controller to do before the CRD is served as it now is. */
function isSettled(crd: CrdObject): boolean {
  if (crd.metadata.deletionTimestamp) return true;
  const accepted = findCondition(crd, 'NamesAccepted');
  if (!accepted || accepted.status === 'Unknown') return false;
  if (accepted.status === 'False') return true;
  return isConditionTrue(crd, 'Established') && sameNames(crd.spec.names, crd.status?.acceptedNames);
}

function sameNames(want: CrdNames | undefined, got: CrdNames | undefined): boolean {
  const list = (v: string[] | undefined) => JSON.stringify([...(v ?? [])].sort());
  return (
    !!want &&
    !!got &&
    want.plural === got.plural &&
    want.kind === got.kind &&
    (!want.singular || want.singular === got.singular) &&
    list(want.shortNames) === list(got.shortNames) &&
    list(want.categories) === list(got.categories)
  );
}
