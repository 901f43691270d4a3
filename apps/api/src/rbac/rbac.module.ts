import { Inject, Module, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import type { Logger } from 'pino';
import { STORAGE, type Storage } from '@plinth/storage';
import { LOGGER } from '../observability/observability.module.js';
import { ResourceRegistry } from '../registry/resource-registry.js';
import { ResourceStoreService } from '../store/resource-store.service.js';
import { StoreModule } from '../store/store.module.js';
import type { ObserveChanges } from '../watch/observe-changes.js';
import { OBSERVE_CHANGES } from '../watch/watch.module.js';
import { DefaultRbacService } from './default-rbac.service.js';

/** RBAC objects the server writes itself: each tenant's default policy and ClusterRole aggregation. */
@Module({
  imports: [StoreModule],
  providers: [
    {
      provide: DefaultRbacService,
      useFactory: (registry: ResourceRegistry, store: ResourceStoreService, lists: Storage, observe: ObserveChanges, logger: Logger) =>
        new DefaultRbacService({ registry, store, lists }, observe, logger),
      inject: [ResourceRegistry, ResourceStoreService, STORAGE, OBSERVE_CHANGES, LOGGER],
    },
  ],
  exports: [DefaultRbacService],
})
export class RbacModule implements OnApplicationBootstrap, OnApplicationShutdown {
  constructor(@Inject(DefaultRbacService) private readonly rbac: DefaultRbacService) {}

  onApplicationBootstrap(): void {
    this.rbac.start();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.rbac.stop();
  }
}
