import { Inject, Module, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import type { Logger } from 'pino';
import { ObjectStoreRepository } from '@plinth/storage';
import { LOGGER } from '../observability/observability.module.js';
import { ResourceDeleteService } from '../store/resource-delete.service.js';
import { StoreHooks } from '../store/store-hooks.js';
import { StoreModule } from '../store/store.module.js';
import { NamespaceDeletionController } from './namespace-deletion.controller.js';

/** The namespace controller: empties Terminating namespaces and removes them, out of the DELETE request. */
@Module({
  imports: [StoreModule],
  providers: [
    {
      provide: NamespaceDeletionController,
      useFactory: (deleter: ResourceDeleteService, objects: ObjectStoreRepository, logger: Logger, hooks: StoreHooks) => {
        const controller = new NamespaceDeletionController({ deleter, objects, logger });
        hooks.onNamespaceTerminating(controller.enqueue);
        return controller;
      },
      inject: [ResourceDeleteService, ObjectStoreRepository, LOGGER, StoreHooks],
    },
  ],
  exports: [NamespaceDeletionController],
})
export class NamespaceModule implements OnApplicationBootstrap, OnApplicationShutdown {
  constructor(@Inject(NamespaceDeletionController) private readonly namespaces: NamespaceDeletionController) {}

  onApplicationBootstrap(): void {
    this.namespaces.start();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.namespaces.stop();
  }
}
