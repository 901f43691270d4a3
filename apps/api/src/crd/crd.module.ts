import { Inject, Module, type OnApplicationShutdown } from '@nestjs/common';
import type { Logger } from 'pino';
import { ObjectListRepository } from '@plinth/storage';
import { LOGGER } from '../observability/observability.module.js';
import { RegistryModule } from '../registry/registry.module.js';
import { ResourceDeleteService } from '../store/resource-delete.service.js';
import { ResourceStoreService } from '../store/resource-store.service.js';
import { StoreModule } from '../store/store.module.js';
import { CrdController } from './crd-controller.service.js';
import { CrdRegistry } from './crd-registry.service.js';

/**
 * The CRD controller: reconciles a tenant's CRDs (names, Established,
 * deletion of their custom resources) whenever the CRD cache, fed by the
 * change stream (registry/), sees them change.
 */
@Module({
  imports: [RegistryModule, StoreModule],
  providers: [
    {
      provide: CrdController,
      useFactory: (registry: CrdRegistry, store: ResourceStoreService, deleter: ResourceDeleteService, lists: ObjectListRepository, logger: Logger) => {
        const controller = new CrdController({ registry, store, deleter, lists, logger });
        registry.onChange((tenant) => controller.enqueue(tenant));
        return controller;
      },
      inject: [CrdRegistry, ResourceStoreService, ResourceDeleteService, ObjectListRepository, LOGGER],
    },
  ],
  exports: [CrdController],
})
export class CrdModule implements OnApplicationShutdown {
  constructor(@Inject(CrdController) private readonly controller: CrdController) {}

  async onApplicationShutdown(): Promise<void> {
    await this.controller.stop();
  }
}
