import { Inject, Module, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import type { Logger } from 'pino';
import { QuotaRepository } from '@plinth/storage';
import { LOGGER } from '../observability/observability.module.js';
import { ResourceRegistry } from '../registry/resource-registry.js';
import { ResourceStoreService } from '../store/resource-store.service.js';
import { StoreHooks } from '../store/store-hooks.js';
import { StoreModule } from '../store/store.module.js';
import { QuotaSupport } from './quota-support.js';
import { resourceQuotaResource } from './resource-quota.resource.js';

/** ResourceQuota: quotas applied to storage's exact counts after each write of one, and their status kept current. */
@Module({
  imports: [StoreModule],
  providers: [
    {
      provide: QuotaSupport,
      useFactory: (quotas: QuotaRepository, registry: ResourceRegistry, store: ResourceStoreService, logger: Logger, hooks: StoreHooks) => {
        const support = new QuotaSupport({ quotas, registry, store, logger });
        hooks.afterWrite(resourceQuotaResource.storageResource, support.afterWrite);
        return support;
      },
      inject: [QuotaRepository, ResourceRegistry, ResourceStoreService, LOGGER, StoreHooks],
    },
  ],
  exports: [QuotaSupport],
})
export class QuotaModule implements OnApplicationBootstrap, OnApplicationShutdown {
  constructor(@Inject(QuotaSupport) private readonly quotas: QuotaSupport) {}

  onApplicationBootstrap(): void {
    this.quotas.start();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.quotas.stop();
  }
}
