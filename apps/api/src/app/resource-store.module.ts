import { Module } from '@nestjs/common';
import { AdmissionChain } from '@plinth/admission';
import { ObjectStoreRepository, type Storage, STORAGE } from '@plinth/storage';
import { AdmissionChainModule } from './admission-chain.module.js';
import { CelRuleWorkers } from '../cel-workers/cel-rule-workers.service.js';
import { CelWorkersModule } from './cel-workers.module.js';
import { ResourceRegistry } from '../registry/resource-registry.js';
import { WatchService } from '../watch/watch.service.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { TenantFeatureGates } from '../kinds/feature-gate/tenant-feature-gates.js';
import { STRATEGY_ENVIRONMENT, type StrategyEnvironment } from '../registry/strategy-context.js';

import { NamespaceDeleter } from '../namespace/namespace-deleter.js';
import { ResourceDeleteService } from '../resource-store/resource-delete.service.js';
import { type CommitBarrier, ResourceStoreService } from '../resource-store/resource-store.service.js';
import { StoreHooks } from '../resource-store/store-hooks.js';
import { TenantValidationBudget } from '../admission/validation-budget.js';

/**
 * Read-your-writes for kinds every replica caches: a write is answered once
 * this replica's change stream has applied it, and once the kind's settled
 * hook (a CRD's names accepted or refused) resolves.
 */
function commitBarrier(watch: WatchService, hooks: StoreHooks): CommitBarrier {
  return async (def, key, revision) => {
    await watch.waitApplied(key.tenant, revision);
    await hooks.settledHook(def.storageResource)?.(key);
  };
}

/**
 * The generic store (create, update, patch through the admission chain and
 * the kinds' strategies) and deletion (finalizers, namespace cascade), with
 * the per-kind hooks other modules register ({@link StoreHooks}).
 */
@Module({
  imports: [AdmissionChainModule, CelWorkersModule],
  providers: [
    StoreHooks,
    {
      provide: STRATEGY_ENVIRONMENT,
      useFactory: (registry: ResourceRegistry, config: AppConfig, tenantFeatures: TenantFeatureGates, celRules: CelRuleWorkers): StrategyEnvironment => ({ kinds: registry, features: config.featureGates, tenantFeatures, celRules }),
      inject: [ResourceRegistry, APP_CONFIG, TenantFeatureGates, CelRuleWorkers],
    },
    {
      provide: ResourceStoreService,
      useFactory: (objects: Storage, admission: AdmissionChain, hooks: StoreHooks, watch: WatchService, validationBudget: TenantValidationBudget, strategyEnvironment: StrategyEnvironment) =>
        new ResourceStoreService(objects, admission, hooks, { barrier: commitBarrier(watch, hooks), validationBudget, strategyEnvironment }),
      inject: [STORAGE, AdmissionChain, StoreHooks, WatchService, TenantValidationBudget, STRATEGY_ENVIRONMENT],
    },
    {
      provide: ResourceDeleteService,
      useFactory: (objects: ObjectStoreRepository, store: ResourceStoreService, hooks: StoreHooks) => new ResourceDeleteService(objects, store, hooks),
      inject: [ObjectStoreRepository, ResourceStoreService, StoreHooks],
    },
    // The namespace kind's own deletion, built with the generic deleter so that wherever one deletes, a namespace deletes as upstream's.
    {
      provide: NamespaceDeleter,
      useFactory: (objects: ObjectStoreRepository, lists: Storage, store: ResourceStoreService, deleter: ResourceDeleteService, registry: ResourceRegistry, hooks: StoreHooks) =>
        new NamespaceDeleter({ objects, lists, store, deleter, registry, hooks }),
      inject: [ObjectStoreRepository, STORAGE, ResourceStoreService, ResourceDeleteService, ResourceRegistry, StoreHooks],
    },
  ],
  exports: [StoreHooks, ResourceStoreService, ResourceDeleteService, NamespaceDeleter],
})
export class ResourceStoreModule {}
