import { Module } from '@nestjs/common';
import type { Logger } from 'pino';
import { ObjectListRepository, TenantRepository } from '@plinth/storage';
import { ControllerManager } from '../controllers/controller-manager.js';
import type { ObserveChanges } from '../watch/observe-changes.js';
import { OBSERVE_CHANGES } from '../watch/watch.module.js';
import { LOGGER } from '../observability/observability.module.js';
import { ResourceDeleteService } from '../store/resource-delete.service.js';
import { ResourceStoreService } from '../store/resource-store.service.js';
import { StoreHooks } from '../store/store-hooks.js';
import { StoreModule } from '../store/store.module.js';
import { CrdController } from './crd-controller.service.js';
import { CrdRegistry } from './crd-registry.service.js';
import { CRD_STORAGE_RESOURCE } from './crd-resource.js';
import { crdSettled } from './crd-settled.js';
import { PolicyStatusRefresher } from './policy-status-refresh.js';

/**
 * The CRD controller: reconciles a tenant's CRDs (names, Established,
 * deletion of their custom resources) whenever the CRD cache, fed by the
 * change stream (kinds/), sees them change; and admission policies'
 * typeChecking recomputed when the kinds a tenant's CRDs serve change.
 */
@Module({
  imports: [StoreModule],
  providers: [
    {
      provide: PolicyStatusRefresher,
      useFactory: (lists: ObjectListRepository, store: ResourceStoreService, logger: Logger, registry: CrdRegistry) => {
        const refresher = new PolicyStatusRefresher(lists, store, logger);
        // Policies are type-checked again when the kinds a tenant's CRDs serve change.
        registry.onServedChange((tenant) => void refresher.refresh(tenant));
        return refresher;
      },
      inject: [ObjectListRepository, ResourceStoreService, LOGGER, CrdRegistry],
    },
    {
      provide: CrdController,
      useFactory: (
        registry: CrdRegistry,
        store: ResourceStoreService,
        deleter: ResourceDeleteService,
        lists: ObjectListRepository,
        tenants: TenantRepository,
        observe: ObserveChanges,
        logger: Logger,
        hooks: StoreHooks,
        manager: ControllerManager,
      ) => {
        const controller = new CrdController({ registry, store, deleter, lists, tenants: () => tenants.list(), observe, logger, queues: manager });
        registry.onChange((tenant) => controller.enqueue(tenant));
        manager.register(controller);
        // A CRD write is answered once this replica serves it as the controller settles it; the controller may run on
        // another replica, or be between leaders for up to the handover bound.
        const settleMs = Math.max(2000, manager.handoverBoundMs);
        hooks.untilSettled(CRD_STORAGE_RESOURCE, (key) => crdSettled(registry, key.tenant, key.name, settleMs));
        return controller;
      },
      inject: [CrdRegistry, ResourceStoreService, ResourceDeleteService, ObjectListRepository, TenantRepository, OBSERVE_CHANGES, LOGGER, StoreHooks, ControllerManager],
    },
  ],
  exports: [CrdController],
})
export class CrdModule {}
