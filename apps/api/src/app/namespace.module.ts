import { Module } from '@nestjs/common';
import type { Logger } from 'pino';
import { ControllerManager } from '../controllers/controller-manager.js';
import { SharedInformerFactory } from '../controllers/shared-informer-factory.js';
import { LOGGER } from '../observability/logger.js';
import { NamespaceDeleter } from '../namespace/namespace-deleter.js';
import { StoreHooks } from '../resource-store/store-hooks.js';
import { ResourceStoreModule } from './resource-store.module.js';
import { OBSERVE_CHANGES, type ObserveChanges } from '../watch/observe-changes.js';
import { NamespaceDeletionController } from '../namespace/namespace-deletion.controller.js';

/** The namespace controller: empties Terminating namespaces and removes them, out of the DELETE request (one replica runs it). */
@Module({
  imports: [ResourceStoreModule],
  providers: [
    {
      provide: NamespaceDeletionController,
      useFactory: (deleter: NamespaceDeleter, informers: SharedInformerFactory, observe: ObserveChanges, logger: Logger, hooks: StoreHooks, manager: ControllerManager) => {
        const namespaces = informers.informerFor({ resource: 'namespaces' });
        const controller = new NamespaceDeletionController({ deleter, namespaces, follow: observe, logger, queues: manager });
        hooks.onNamespaceTerminating(controller.enqueueNamespace);
        manager.register(controller);
        return controller;
      },
      inject: [NamespaceDeleter, SharedInformerFactory, OBSERVE_CHANGES, LOGGER, StoreHooks, ControllerManager],
    },
  ],
  exports: [NamespaceDeletionController],
})
export class NamespaceModule {}
