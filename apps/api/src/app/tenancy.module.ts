import { Inject, Module, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import type { Logger } from 'pino';
import { type Storage, STORAGE, TenantMoveRepository, TenantRepository } from '@plinth/storage';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { ControllerManager } from '../controllers/controller-manager.js';
import { SharedInformerFactory } from '../controllers/shared-informer-factory.js';
import { PLATFORM_TENANT } from '../kinds/tenant/tenant-api.js';
import { LifecycleModule } from './lifecycle.module.js';
import { PostStartHooks } from '../lifecycle/post-start-hooks.js';
import { LOGGER } from '../observability/logger.js';
import { DefaultRbacService } from '../rbac/default-rbac.service.js';
import { RbacModule } from './rbac.module.js';
import { ResourceRegistry } from '../registry/resource-registry.js';
import { ResourceStoreService } from '../resource-store/resource-store.service.js';
import { StoreHooks } from '../resource-store/store-hooks.js';
import { ResourceStoreModule } from './resource-store.module.js';
import { TenantCache } from '../kinds/tenant/tenant-cache.js';
import { TenantDirectory } from '../sharding/tenant-directory.js';
import { ShardPool } from '../sharding/shard-pool.js';
import { purgeEverywhere } from '../sharding/tenant-leftover-sweep.js';
import { TenantDataKeys } from '../encryption/tenant-data-keys.js';
import { TenantDeletionRunner } from '../tenancy/tenant-deletion.runner.js';
import { TenantLifecycleService } from '../tenancy/tenant-lifecycle.service.js';
import { TenantProvisioner } from '../tenancy/tenant-provisioner.js';
import { tenantResource } from '../kinds/tenant/tenant.resource.js';
import { WatchService } from '../watch/watch.service.js';
import { forgetRetiredTenants } from '../tenancy/tenant-retirement.js';

/**
 * Tenants as API objects: the Tenant kind's lifecycle hooked into the
 * generic store (provisioning after a create or a spec change, content
 * removal when deletion is requested), the provisioning of the platform
 * tenant and PLINTH_TENANTS once the server listens, and the tenant
 * controller (deletions, and the periodic reconcile that completes whatever
 * a crash interrupted).
 */
@Module({
  imports: [ResourceStoreModule, RbacModule, LifecycleModule],
  providers: [
    {
      provide: TenantProvisioner,
      useFactory: (tenants: TenantRepository, cache: TenantCache, registry: ResourceRegistry, store: ResourceStoreService, logger: Logger, rbac: DefaultRbacService, pool: ShardPool) => {
        const moves = new TenantMoveRepository();
        return new TenantProvisioner({
          tenants,
          cache,
          registry,
          store,
          logger,
          ensureDefaultRbac: async (t) => void (await rbac.ensure(t)),
          removeForeign: (t, uid) => purgeEverywhere(pool, moves, t, uid),
        });
      },
      inject: [TenantRepository, TenantCache, ResourceRegistry, ResourceStoreService, LOGGER, DefaultRbacService, ShardPool],
    },
    {
      provide: TenantDeletionRunner,
      useFactory: (tenants: TenantRepository, logger: Logger, keys: TenantDataKeys, pool: ShardPool) => {
        const moves = new TenantMoveRepository();
        return new TenantDeletionRunner(tenants, logger, undefined, (t) => keys.destroy(t), (t) => purgeEverywhere(pool, moves, t));
      },
      inject: [TenantRepository, LOGGER, TenantDataKeys, ShardPool],
    },
    {
      provide: TenantLifecycleService,
      useFactory: (
        tenants: TenantRepository,
        objects: Storage,
        lists: Storage,
        store: ResourceStoreService,
        provisioner: TenantProvisioner,
        deletion: TenantDeletionRunner,
        logger: Logger,
        hooks: StoreHooks,
        informers: SharedInformerFactory,
        manager: ControllerManager,
        directory: TenantDirectory,
      ) => {
        const tenantObjects = informers.informerFor({ tenant: PLATFORM_TENANT, resource: tenantResource.storageResource });
        const lifecycle = new TenantLifecycleService({ tenants, objects, lists, tenantObjects, store, provisioner, deletion, logger, queues: manager, directory });
        manager.register(lifecycle);
        hooks.afterCreate(tenantResource.storageResource, lifecycle.afterCreate);
        hooks.afterUpdate(tenantResource.storageResource, lifecycle.afterUpdate);
        hooks.onDeletionRequested(tenantResource.storageResource, lifecycle.deletionRequested);
        return lifecycle;
      },
      inject: [TenantRepository, STORAGE, STORAGE, ResourceStoreService, TenantProvisioner, TenantDeletionRunner, LOGGER, StoreHooks, SharedInformerFactory, ControllerManager, TenantDirectory],
    },
  ],
  exports: [TenantLifecycleService, TenantProvisioner, TenantDeletionRunner],
})
export class TenancyModule implements OnModuleInit, OnApplicationShutdown {
  private stopForgetting: (() => void) | undefined;

  constructor(
    @Inject(TenantDirectory) private readonly directory: TenantDirectory,
    @Inject(WatchService) private readonly watch: WatchService,
    @Inject(TenantCache) private readonly cache: TenantCache,
    @Inject(TenantDataKeys) private readonly keys: TenantDataKeys,
    @Inject(LOGGER) private readonly logger: Logger,
    @Inject(TenantLifecycleService) lifecycle: TenantLifecycleService,
    @Inject(APP_CONFIG) config: AppConfig,
    @Inject(PostStartHooks) postStart: PostStartHooks,
    @Inject(DefaultRbacService) rbac: DefaultRbacService,
    @Inject(TenantRepository) tenants: TenantRepository,
  ) {
    // Tenants are objects: the platform tenant and PLINTH_TENANTS get Tenant objects, provisioned before the server reports ready.
    postStart.add('tenancy/provision-tenants', async (url) => {
      lifecycle.setBaseUrl(url);
      await lifecycle.provisionAtStart(config.tenants);
    });
    // Existing tenants get missing default roles in the background.
    postStart.add('rbac/bootstrap-roles', () => rbac.reconcileAllTenants(() => tenants.list()));
  }

  /** A deleted tenant is forgotten by this process as soon as its Tenant object's deletion reaches it (docs/tenancy.md). */
  onModuleInit(): void {
    this.stopForgetting = forgetRetiredTenants({
      onRetired: (l) => this.directory.onRetired(l),
      endStreams: (t, reason) => this.watch.retireTenant(t, reason),
      forgetRow: (t) => this.cache.forget(t),
      forgetKeys: (t) => this.keys.forget(t),
      logger: this.logger,
    });
  }

  onApplicationShutdown(): void {
    this.stopForgetting?.();
  }
}
