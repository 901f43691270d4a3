import { Inject, Module, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import type { Logger } from 'pino';
import { type Storage, STORAGE } from '@plinth/storage';
import { ControllerManager } from '../controllers/controller-manager.js';
import { LOGGER } from '../observability/logger.js';
import { ResourceRegistry } from '../registry/resource-registry.js';
import { ResourceStoreService } from '../resource-store/resource-store.service.js';
import { ResourceStoreModule } from './resource-store.module.js';
import { OBSERVE_CHANGES, type ObserveChanges } from '../watch/observe-changes.js';
import { DefaultRbacService } from '../rbac/default-rbac.service.js';

/** RBAC objects the server writes itself: each tenant's default policy and ClusterRole aggregation. */
@Module({
  imports: [ResourceStoreModule],
  providers: [
    {
      provide: DefaultRbacService,
      useFactory: (registry: ResourceRegistry, store: ResourceStoreService, lists: Storage, observe: ObserveChanges, manager: ControllerManager, logger: Logger) =>
        new DefaultRbacService({ registry, store, lists }, observe, manager, logger),
      inject: [ResourceRegistry, ResourceStoreService, STORAGE, OBSERVE_CHANGES, ControllerManager, LOGGER],
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
