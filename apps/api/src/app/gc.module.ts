import { Module } from '@nestjs/common';
import type { Logger } from 'pino';
import { OwnerRepository } from '@plinth/storage';
import { ControllerManager } from '../controllers/controller-manager.js';
import { LOGGER } from '../observability/logger.js';
import { ResourceRegistry } from '../registry/resource-registry.js';
import { ResourceDeleteService } from '../resource-store/resource-delete.service.js';
import { ResourceStoreService } from '../resource-store/resource-store.service.js';
import { ResourceStoreModule } from './resource-store.module.js';
import { OBSERVE_CHANGES, type ObserveChanges } from '../watch/observe-changes.js';
import { GarbageCollector } from '../gc/garbage-collector.js';

/** Garbage collection by ownerReferences (Background, Foreground, Orphan): a controller of the ControllerManager (one replica runs it). */
@Module({
  imports: [ResourceStoreModule],
  providers: [
    {
      provide: GarbageCollector,
      useFactory: (
        owners: OwnerRepository,
        registry: ResourceRegistry,
        store: ResourceStoreService,
        deleter: ResourceDeleteService,
        observe: ObserveChanges,
        logger: Logger,
        manager: ControllerManager,
      ) => {
        const gc = new GarbageCollector({ owners, registry, store, deleter, follow: observe, logger, queues: manager });
        manager.register(gc);
        return gc;
      },
      inject: [OwnerRepository, ResourceRegistry, ResourceStoreService, ResourceDeleteService, OBSERVE_CHANGES, LOGGER, ControllerManager],
    },
  ],
  exports: [GarbageCollector],
})
export class GarbageCollectionModule {}
