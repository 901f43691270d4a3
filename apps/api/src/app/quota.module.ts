import { Module } from '@nestjs/common';
import type { Logger } from 'pino';
import { QuotaRepository } from '@plinth/storage';
import { ControllerManager } from '../controllers/controller-manager.js';
import { LOGGER } from '../observability/logger.js';
import { ResourceRegistry } from '../registry/resource-registry.js';
import { ResourceStoreService } from '../resource-store/resource-store.service.js';
import { StoreHooks } from '../resource-store/store-hooks.js';
import { ResourceStoreModule } from './resource-store.module.js';
import { QuotaSupport } from '../quota/quota-support.js';
import { resourceQuotaResource } from '../kinds/resourcequota/resource-quota.resource.js';

/** ResourceQuota: quotas applied to storage's exact counts after each write of one, and their status kept current by the quota controller. */
@Module({
  imports: [ResourceStoreModule],
  providers: [
    {
      provide: QuotaSupport,
      useFactory: (quotas: QuotaRepository, registry: ResourceRegistry, store: ResourceStoreService, logger: Logger, hooks: StoreHooks, manager: ControllerManager) => {
        const support = new QuotaSupport({ quotas, registry, store, logger, queues: manager });
        hooks.afterWrite(resourceQuotaResource.storageResource, support.afterWrite);
        manager.register(support);
        return support;
      },
      inject: [QuotaRepository, ResourceRegistry, ResourceStoreService, LOGGER, StoreHooks, ControllerManager],
    },
  ],
  exports: [QuotaSupport],
})
export class QuotaModule {}
