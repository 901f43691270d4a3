import { Module } from '@nestjs/common';
import type { Logger } from 'pino';
import { ObjectListRepository, ObjectStoreRepository, TenantRepository } from '@plinth/storage';
import type { AppConfig } from '../../config/app-config.js';
import { APP_CONFIG } from '../../config/config.module.js';
import { ControllerManager } from '../../controllers/controller-manager.js';
import { LOGGER } from '../../observability/observability.module.js';
import { ResourceRegistry } from '../../registry/resource-registry.js';
import { ResourceStoreService } from '../../store/resource-store.service.js';
import { StoreModule } from '../../store/store.module.js';
import type { ObserveChanges } from '../../watch/observe-changes.js';
import { OBSERVE_CHANGES } from '../../watch/watch.module.js';
import { StorageVersionMigrationController } from './storage-version-migration.controller.js';
import { STORAGE_MIGRATION_GROUP, STORAGE_MIGRATION_VERSION } from './storage-version-migration.schema.js';

/** Token of the controller, null when the StorageVersionMigrator gate is off or the API is not served. */
export const STORAGE_VERSION_MIGRATION_CONTROLLER = Symbol('STORAGE_VERSION_MIGRATION_CONTROLLER');

/**
 * The StorageVersionMigration controller of the ControllerManager, as
 * upstream's kube-controller-manager runs it: only with the
 * StorageVersionMigrator gate on and storagemigration.k8s.io/v1beta1 served.
 */
@Module({
  imports: [StoreModule],
  providers: [
    {
      provide: STORAGE_VERSION_MIGRATION_CONTROLLER,
      useFactory: (
        config: AppConfig,
        registry: ResourceRegistry,
        store: ResourceStoreService,
        objects: ObjectStoreRepository,
        lists: ObjectListRepository,
        tenants: TenantRepository,
        observe: ObserveChanges,
        logger: Logger,
        manager: ControllerManager,
      ) => {
        if (!config.featureGates.enabled('StorageVersionMigrator') || !config.runtimeConfig.serves(`${STORAGE_MIGRATION_GROUP}/${STORAGE_MIGRATION_VERSION}`)) return null;
        const controller = new StorageVersionMigrationController({ registry, store, objects, lists, tenants: () => tenants.list(), observe, logger, queues: manager });
        manager.register(controller);
        return controller;
      },
      inject: [APP_CONFIG, ResourceRegistry, ResourceStoreService, ObjectStoreRepository, ObjectListRepository, TenantRepository, OBSERVE_CHANGES, LOGGER, ControllerManager],
    },
  ],
})
export class StorageMigrationModule {}
