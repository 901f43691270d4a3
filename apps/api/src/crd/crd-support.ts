import type { Logger } from 'pino';
import type { Database, ObjectListRepository } from '@plinth/storage';
import { ResourceRevisionsRepository } from '@plinth/storage';
import type { ResourceRegistry } from '../registry/resource-registry.js';
import type { ResourceDeleteService } from '../store/resource-delete.service.js';
import type { ResourceStoreService } from '../store/resource-store.service.js';
import { CrdController } from './crd-controller.service.js';
import { CrdRegistry } from './crd-registry.service.js';

/** CustomResourceDefinition support of one server instance: the CRD cache and the controller. */
export interface CrdSupport {
  cache: CrdRegistry;
  controller: CrdController;
  /** Starts polling for CRD changes. */
  start(): void;
  stop(): Promise<void>;
  /** After a CRD write on this replica: reload the tenant's CRDs at once (the controller then reconciles them). */
  afterWrite(tenant: string): void;
}

/** What CRD support needs from the rest of the server. */
export interface CrdSupportDeps {
  db: Database;
  registry: ResourceRegistry;
  lists: ObjectListRepository;
  store: ResourceStoreService;
  deleter: ResourceDeleteService;
  logger: Logger;
  pollIntervalMs: number;
}

/** Wires the CRD cache into `registry` and the controller onto the cache. */
export function createCrdSupport(deps: CrdSupportDeps): CrdSupport {
  const cache = new CrdRegistry(deps.lists, new ResourceRevisionsRepository(deps.db), { pollIntervalMs: deps.pollIntervalMs, logger: deps.logger });
  const controller = new CrdController({ registry: cache, store: deps.store, deleter: deps.deleter, lists: deps.lists, logger: deps.logger });
  cache.onChange = (tenant) => controller.enqueue(tenant);
  deps.registry.setDynamicSource(cache);
  return {
    cache,
    controller,
    start: () => cache.start(),
    stop: async () => {
      await cache.stop();
      await controller.stop();
    },
    afterWrite: (tenant) => {
      cache.refresh(tenant).catch((err) => deps.logger.warn({ tenant, err: (err as Error).message }, 'CRD reload failed'));
    },
  };
}
