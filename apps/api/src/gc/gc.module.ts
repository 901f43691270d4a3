import { Inject, Module, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import type { Logger } from 'pino';
import { OwnerRepository } from '@plinth/storage';
import { LOGGER } from '../observability/observability.module.js';
import { ResourceRegistry } from '../registry/resource-registry.js';
import { ResourceDeleteService } from '../store/resource-delete.service.js';
import { ResourceStoreService } from '../store/resource-store.service.js';
import { StoreModule } from '../store/store.module.js';
import type { ObserveChanges } from '../watch/observe-changes.js';
import { OBSERVE_CHANGES } from '../watch/watch.module.js';
import { GarbageCollector } from './garbage-collector.js';

/** Garbage collection by ownerReferences (Background, Foreground, Orphan), following the change stream with a periodic sweep. */
@Module({
  imports: [StoreModule],
  providers: [
    {
      provide: GarbageCollector,
      useFactory: (owners: OwnerRepository, registry: ResourceRegistry, store: ResourceStoreService, deleter: ResourceDeleteService, observe: ObserveChanges, logger: Logger) =>
        new GarbageCollector({ owners, registry, store, deleter, observe, logger }),
      inject: [OwnerRepository, ResourceRegistry, ResourceStoreService, ResourceDeleteService, OBSERVE_CHANGES, LOGGER],
    },
  ],
  exports: [GarbageCollector],
})
export class GarbageCollectionModule implements OnApplicationBootstrap, OnApplicationShutdown {
  constructor(@Inject(GarbageCollector) private readonly gc: GarbageCollector) {}

  onApplicationBootstrap(): void {
    this.gc.start();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.gc.stop();
  }
}
