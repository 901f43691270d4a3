import { Module } from '@nestjs/common';
import type { Logger } from 'pino';
import { ObjectListRepository, ObjectStoreRepository, TenantRepository } from '@plinth/storage';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { ControllerManager } from '../controllers/controller-manager.js';
import { LOGGER } from '../observability/logger.js';
import { ResourceRegistry } from '../registry/resource-registry.js';
import { ResourceStoreService } from '../resource-store/resource-store.service.js';
import { ResourceStoreModule } from './resource-store.module.js';
import { OBSERVE_CHANGES, type ObserveChanges } from '../watch/observe-changes.js';
import { StorageVersionMigrationController } from '../storage-migration/storage-version-migration.controller.js';
import { STORAGE_MIGRATION_GROUP, STORAGE_MIGRATION_VERSION } from '../kinds/storagemigration/storage-version-migration.schema.js';

/** Token of the controller, null when the StorageVersionMigrator gate is off or the API is not served. */
export const STORAGE_VERSION_MIGRATION_CONTROLLER = Symbol('STORAGE_VERSION_MIGRATION_CONTROLLER');

/**
 * The StorageVersionMigration controller of the ControllerManager, as
 * upstream's kube-controller-manager runs it: only with the
 * StorageVersionMigrator gate on and storagemigration.k8s.io/v1beta1 served.
 */
@Module({
  imports: [ResourceStoreModule],
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
