import type { Logger } from 'pino';
import type { ObjectListRepository, ObjectStoreRepository, TenantRepository } from '@plinth/storage';
import type { ResourceRegistry } from '../registry/resource-registry.js';
import type { ResourceDeleteService } from '../store/resource-delete.service.js';
import type { ResourceStoreService } from '../store/resource-store.service.js';
import type { TenantCache } from '../tenant-cache.js';
import { PLATFORM_TENANT } from './tenant-api.js';
import { TenantDeletionRunner } from './tenant-deletion.runner.js';
import { TenantLifecycleService } from './tenant-lifecycle.service.js';
import { TenantProvisioner } from './tenant-provisioner.js';
import { tenantResource } from './tenant-resource.js';

/** Tenancy as the rest of the server sees it. */
export interface TenancySupport {
  cache: TenantCache;
  provisioner: TenantProvisioner;
  deletion: TenantDeletionRunner;
  lifecycle: TenantLifecycleService;
}

/** What {@link createTenancySupport} wires together. */
export interface TenancySupportDeps {
  tenants: TenantRepository;
  cache: TenantCache;
  registry: ResourceRegistry;
  objects: ObjectStoreRepository;
  lists: ObjectListRepository;
  store: ResourceStoreService;
  deleter: ResourceDeleteService;
  logger: Logger;
}

/**
 * Serves the Tenant kind in the platform scope and hooks its lifecycle into
 * the generic store: provisioning after a create, content removal when its
 * deletion is requested. Call once per server, at wiring time.
 */
export function createTenancySupport(deps: TenancySupportDeps): TenancySupport {
  deps.registry.serveOnlyIn(PLATFORM_TENANT, [tenantResource]);
  const provisioner = new TenantProvisioner({ tenants: deps.tenants, cache: deps.cache, registry: deps.registry, store: deps.store, logger: deps.logger });
  const deletion = new TenantDeletionRunner(deps.tenants, deps.logger);
  const lifecycle = new TenantLifecycleService({
    tenants: deps.tenants,
    objects: deps.objects,
    lists: deps.lists,
    store: deps.store,
    provisioner,
    deletion,
    logger: deps.logger,
  });
  deps.store.afterCreate.set(tenantResource.storageResource, lifecycle.afterCreate);
  deps.store.afterUpdate.set(tenantResource.storageResource, lifecycle.afterUpdate);
  deps.deleter.deletionRequested.set(tenantResource.storageResource, lifecycle.deletionRequested);
  return { cache: deps.cache, provisioner, deletion, lifecycle };
}
