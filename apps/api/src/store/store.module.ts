import { Module } from '@nestjs/common';
import { AdmissionChain } from '@plinth/admission';
import { ObjectListRepository, ObjectStoreRepository } from '@plinth/storage';
import { AdmissionChainModule } from '../admission/admission-chain.module.js';
import { RegistryModule } from '../registry/registry.module.js';
import { ResourceRegistry } from '../registry/resource-registry.js';
import { WatchService } from '../watch/watch.service.js';
import { ResourceDeleteService } from './resource-delete.service.js';
import { type CommitBarrier, ResourceStoreService } from './resource-store.service.js';
import { StoreHooks } from './store-hooks.js';
import { TenantValidationBudget } from '../admission/validation-budget.js';

/**
 * Read-your-writes for kinds every replica caches: a write is answered once
 * this replica's change stream has applied it, and once the kind's settled
 * hook (a CRD's names accepted or refused) resolves.
 */
function commitBarrier(watch: WatchService, hooks: StoreHooks): CommitBarrier {
  return async (def, key, revision) => {
    await watch.pipeline.waitApplied(revision);
    await hooks.settledHook(def.storageResource)?.(key);
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
      useFactory: (objects: ObjectStoreRepository, admission: AdmissionChain, hooks: StoreHooks, watch: WatchService, budget: TenantValidationBudget) =>
        new ResourceStoreService(objects, admission, hooks, commitBarrier(watch, hooks), budget),
      inject: [ObjectStoreRepository, AdmissionChain, StoreHooks, WatchService, TenantValidationBudget],
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
