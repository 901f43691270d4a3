import { Module } from '@nestjs/common';
import { AdmissionChain } from '@plinth/admission';
import { ObjectListRepository, ObjectStoreRepository } from '@plinth/storage';
import { AdmissionChainModule } from '../admission/admission-chain.module.js';
import { CrdRegistry } from '../crd/crd-registry.service.js';
import { customResourceDefinitionResource } from '../crd/crd-resource.js';
import { crdSettled } from '../crd/crd-settled.js';
import { RegistryModule } from '../registry/registry.module.js';
import { ResourceRegistry } from '../registry/resource-registry.js';
import { WatchService } from '../watch/watch.service.js';
import { ResourceDeleteService } from './resource-delete.service.js';
import { type CommitBarrier, ResourceStoreService } from './resource-store.service.js';
import { StoreHooks } from './store-hooks.js';
import { TenantValidationBudget } from './validation-budget.js';

/**
 * Read-your-writes for kinds every replica caches: a write is answered once
 * this replica's change stream has applied it, and a CRD once its names
 * were accepted or refused.
 */
function commitBarrier(watch: WatchService, crds: CrdRegistry): CommitBarrier {
  return async (def, key, revision) => {
    await watch.pipeline.waitApplied(revision);
    if (def === customResourceDefinitionResource) await crdSettled(crds, key.tenant, key.name);
  };
}

/**
 * The generic store (create, update, patch through the admission chain and
 * the kinds' strategies) and deletion (finalizers, namespace cascade), with
 * the per-kind hooks other modules register ({@link StoreHooks}).
 */
@Module({
  imports: [RegistryModule, AdmissionChainModule],
  providers: [
    StoreHooks,
    {
      provide: ResourceStoreService,
      useFactory: (objects: ObjectStoreRepository, admission: AdmissionChain, hooks: StoreHooks, watch: WatchService, crds: CrdRegistry, budget: TenantValidationBudget) =>
        new ResourceStoreService(objects, admission, hooks, commitBarrier(watch, crds), budget),
      inject: [ObjectStoreRepository, AdmissionChain, StoreHooks, WatchService, CrdRegistry, TenantValidationBudget],
    },
    {
      provide: ResourceDeleteService,
      useFactory: (objects: ObjectStoreRepository, lists: ObjectListRepository, store: ResourceStoreService, registry: ResourceRegistry, hooks: StoreHooks) =>
        new ResourceDeleteService(objects, lists, store, registry, hooks),
      inject: [ObjectStoreRepository, ObjectListRepository, ResourceStoreService, ResourceRegistry, StoreHooks],
    },
  ],
  exports: [StoreHooks, ResourceStoreService, ResourceDeleteService],
})
export class StoreModule {}
