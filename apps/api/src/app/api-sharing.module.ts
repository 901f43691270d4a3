import { Inject, Module, type OnApplicationShutdown } from '@nestjs/common';
import type { Logger } from 'pino';
import { ChangeLogRepository, STORAGE, type Storage } from '@plinth/storage';
import { ApiSharingIndex } from '../apisharing/api-sharing-index.js';
import { bindingStatusHook, exportStatusHook } from '../apisharing/api-sharing-status.js';
import { BindingCleanupController } from '../apisharing/binding-cleanup.controller.js';
import { viewReadsPerShard } from '../apisharing/bounded.js';
import { ExportView } from '../apisharing/export-view.rest.js';
import { ClaimedView } from '../apisharing/claimed-view.js';
import { ResourceDeleteService } from '../resource-store/resource-delete.service.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { ControllerManager } from '../controllers/controller-manager.js';
import { CrdRegistry } from '../crd/crd-registry.service.js';
import { APIBINDING_STORAGE_RESOURCE, APIEXPORT_STORAGE_RESOURCE } from '../kinds/apis/apis.schema.js';
import { PostStartHooks } from '../lifecycle/post-start-hooks.js';
import { LOGGER } from '../observability/logger.js';
import { ResourceRegistry } from '../registry/resource-registry.js';
import { ResourceStoreService } from '../resource-store/resource-store.service.js';
import { ShardPool } from '../sharding/shard-pool.js';
import { StoreHooks } from '../resource-store/store-hooks.js';
import { OBSERVE_CHANGES, type ObserveChanges } from '../watch/observe-changes.js';
import { WatchService } from '../watch/watch.service.js';
import { ResourceStoreModule } from './resource-store.module.js';

/**
 * APIs shared across tenants (docs/api-sharing.md): the status of
 * APIExports (their view's URL) and APIBindings (`Bound`, the bound
 * resources) written once they are stored, and the provider's view
 * (`apiexports/content`, listed in the resource API's KindRestRegistry),
 * and the controller that deletes a deleted binding's objects.
 * The index of exports and bindings and the bound kinds in each tenant's
 * registry are KindsModule's; the admission checks AdmissionChainModule's.
 */
@Module({
  imports: [ResourceStoreModule],
  providers: [
    {
      provide: ExportView,
      useFactory: (index: ApiSharingIndex, crds: CrdRegistry, registry: ResourceRegistry, lists: Storage, store: ResourceStoreService, watch: WatchService, config: AppConfig, changes: ChangeLogRepository, pool: ShardPool, deleter: ResourceDeleteService) =>
        new ExportView({ index, crds, registry, lists, store, watch, changes, shardReady: (name) => pool.state(name)?.ready ?? false, maxWatchSeconds: config.maxWatchSeconds, readsPerShard: viewReadsPerShard(config.dbPoolSize), claims: new ClaimedView({ index, registry, lists, store, deleter }) }),
      inject: [ApiSharingIndex, CrdRegistry, ResourceRegistry, STORAGE, ResourceStoreService, WatchService, APP_CONFIG, ChangeLogRepository, ShardPool, ResourceDeleteService],
    },
    {
      provide: BindingCleanupController,
      useFactory: (observe: ObserveChanges, index: ApiSharingIndex, crds: CrdRegistry, lists: Storage, deleter: ResourceDeleteService, logger: Logger, manager: ControllerManager, store: ResourceStoreService) => {
        const cleanup = new BindingCleanupController({ follow: observe, index, crds, lists, deleter, store, logger, queues: manager });
        manager.register(cleanup);
        return cleanup;
      },
      inject: [OBSERVE_CHANGES, ApiSharingIndex, CrdRegistry, STORAGE, ResourceDeleteService, LOGGER, ControllerManager, ResourceStoreService],
    },
  ],
  exports: [ExportView, BindingCleanupController],
})
export class ApiSharingModule implements OnApplicationShutdown {
  constructor(
    @Inject(ExportView) private readonly view: ExportView,
    @Inject(StoreHooks) hooks: StoreHooks,
    @Inject(ResourceStoreService) store: ResourceStoreService,
    @Inject(ApiSharingIndex) index: ApiSharingIndex,
    @Inject(CrdRegistry) crds: CrdRegistry,
    @Inject(LOGGER) logger: Logger,
    @Inject(PostStartHooks) postStart: PostStartHooks,
  ) {
    let baseUrl = '';
    postStart.add('apisharing/base-url', async (url) => {
      baseUrl = url;
    });
    const deps = { store, index, crds, logger, baseUrl: () => baseUrl };
    hooks.afterWrite(APIBINDING_STORAGE_RESOURCE, bindingStatusHook(deps));
    hooks.afterWrite(APIEXPORT_STORAGE_RESOURCE, exportStatusHook(deps));
  }

  onApplicationShutdown(): void {
    this.view.closeAll();
  }
}
