import { Global, Inject, Module, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import type { Logger } from 'pino';
import { ObjectListRepository } from '@plinth/storage';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { CrdRegistry } from '../crd/crd-registry.service.js';
import { CRD_STORAGE_RESOURCE } from '../crd/crd-resource.js';
import { LOGGER } from '../observability/observability.module.js';
import { PLATFORM_TENANT } from '../tenancy/tenant-api.js';
import { tenantResource } from '../tenancy/tenant-resource.js';
import type { ObserveChanges } from '../watch/observe-changes.js';
import { OBSERVE_CHANGES } from '../watch/watch.module.js';
import { builtinResources } from './builtin-kinds.js';
import { ResourceRegistry } from '../registry/resource-registry.js';

/**
 * The served resources of every tenant (global: every concern reads the
 * registry): the built-in kinds of the group versions the runtime
 * configuration enables (one folder per kind under kinds/), the platform
 * scope's Tenant kind, and each tenant's CRDs from the CRD cache, which
 * follows the change stream from module start.
 */
@Global()
@Module({
  providers: [
    {
      provide: CrdRegistry,
      // Descriptions of x-plinth-feature-gate fields name the gate's stage.
      useFactory: (lists: ObjectListRepository, logger: Logger, config: AppConfig) => new CrdRegistry(lists, { logger, featureStage: (gate) => config.featureGates.stage(gate) }),
      inject: [ObjectListRepository, LOGGER, APP_CONFIG],
    },
    {
      provide: ResourceRegistry,
      useFactory: (config: AppConfig, crds: CrdRegistry) =>
        new ResourceRegistry(
          // Gated group versions (alpha APIs) are served only when the runtime configuration enables them.
          builtinResources.filter((d) => config.runtimeConfig.serves(d.group ? `${d.group}/${d.version}` : d.version)),
          { scoped: { [PLATFORM_TENANT]: [tenantResource] }, dynamic: crds },
        ),
      inject: [APP_CONFIG, CrdRegistry],
    },
  ],
  exports: [ResourceRegistry, CrdRegistry],
})
export class KindsModule implements OnModuleInit, OnApplicationShutdown {
  private unobserve: (() => void) | undefined;

  constructor(
    @Inject(CrdRegistry) private readonly crds: CrdRegistry,
    @Inject(OBSERVE_CHANGES) private readonly observe: ObserveChanges,
  ) {}

  onModuleInit(): void {
    this.unobserve = this.observe(CRD_STORAGE_RESOURCE, this.crds.observer);
  }

  onApplicationShutdown(): void {
    this.unobserve?.();
  }
}
