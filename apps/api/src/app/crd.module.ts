import { Module } from '@nestjs/common';
import type { Logger } from 'pino';
import { STORAGE, type Storage } from '@plinth/storage';
import { ControllerManager } from '../controllers/controller-manager.js';
import { LOGGER } from '../observability/logger.js';
import { ResourceDeleteService } from '../resource-store/resource-delete.service.js';
import { ResourceStoreService } from '../resource-store/resource-store.service.js';
import { StoreHooks } from '../resource-store/store-hooks.js';
import { ResourceStoreModule } from './resource-store.module.js';
import { CrdController } from '../crd/crd-controller.service.js';
import { SharedInformerFactory } from '../controllers/shared-informer-factory.js';
import { CrdRegistry } from '../crd/crd-registry.service.js';
import { CRD_STORAGE_RESOURCE } from '../kinds/customresourcedefinition/crd.resource.js';
import { crdSettled } from '../crd/crd-settled.js';
import { PolicyStatusRefresher } from '../crd/policy-status-refresh.js';
import { StorageVersionMigrator } from '../crd/migration/storage-version-migrator.js';
import { JobName } from '../jobs/job-names.js';
import { JOB_QUEUE, type JobQueue } from '../jobs/job-queue.js';

/**
 * The CRD controller: reconciles a tenant's CRDs (names, Established,
 * deletion of their custom resources) whenever the CRD cache, fed by the
 * change stream (kinds/), sees them change; admission policies'
 * typeChecking recomputed when the kinds a tenant's CRDs serve change; and
 * the storage version migration of CRDs whose storage version changed.
 */
@Module({
  imports: [ResourceStoreModule],
  providers: [
    {
      provide: PolicyStatusRefresher,
      useFactory: (lists: Storage, store: ResourceStoreService, logger: Logger, registry: CrdRegistry) => {
        const refresher = new PolicyStatusRefresher(lists, store, logger);
        // Policies are type-checked again when the kinds a tenant's CRDs serve change.
        registry.onServedChange((tenant) => void refresher.refresh(tenant));
        return refresher;
      },
      inject: [STORAGE, ResourceStoreService, LOGGER, CrdRegistry],
    },
    {
      provide: CrdController,
      useFactory: (
        registry: CrdRegistry,
        store: ResourceStoreService,
        deleter: ResourceDeleteService,
        lists: Storage,
        informers: SharedInformerFactory,
        logger: Logger,
        hooks: StoreHooks,
        manager: ControllerManager,
      ) => {
        const crds = informers.informerFor({ resource: CRD_STORAGE_RESOURCE });
        const controller = new CrdController({ registry, store, deleter, lists, crds, logger, queues: manager });
        registry.onChange((tenant) => controller.enqueueTenant(tenant));
        manager.register(controller);
        // A CRD write is answered once this replica serves it as the controller settles it; the controller may run on
        // another replica, or be between leaders for up to the handover bound.
        const settleMs = Math.max(2000, manager.handoverBoundMs);
        hooks.untilSettled(CRD_STORAGE_RESOURCE, (key) => crdSettled(registry, key.tenant, key.name, settleMs));
        return controller;
      },
      inject: [CrdRegistry, ResourceStoreService, ResourceDeleteService, STORAGE, SharedInformerFactory, LOGGER, StoreHooks, ControllerManager],
    },
    {
      // Storage version migration: a CRD whose storedVersions hold more than its storage version gets a job.
      provide: StorageVersionMigrator,
      useFactory: (registry: CrdRegistry, lists: Storage, objects: Storage, store: ResourceStoreService, logger: Logger, jobs: JobQueue) => {
        const migrator = new StorageVersionMigrator({ registry, lists, objects, store, logger, submit: (tenant) => jobs.add(JobName.MigrateCrdStorage, { tenant }) });
        registry.onChange((tenant, crds) => migrator.check(tenant, crds));
        return migrator;
      },
      inject: [CrdRegistry, STORAGE, STORAGE, ResourceStoreService, LOGGER, JOB_QUEUE],
    },
  ],
  exports: [CrdController],
})
export class CrdModule {}
