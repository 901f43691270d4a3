import { Module } from '@nestjs/common';
import type { Logger } from 'pino';
import { type Storage, STORAGE, TenantRepository } from '@plinth/storage';
import { SERVING_PKI, type ServingPki } from '../pki/pki-store.js';
import { ControllerManager } from '../controllers/controller-manager.js';
import { LOGGER } from '../observability/logger.js';
import { ResourceRegistry } from '../registry/resource-registry.js';
import { ResourceStoreService } from '../resource-store/resource-store.service.js';
import { StoreHooks } from '../resource-store/store-hooks.js';
import { ResourceStoreModule } from './resource-store.module.js';
import { OBSERVE_CHANGES, type ObserveChanges } from '../watch/observe-changes.js';
import { RootCaPublisher } from '../certificates/root-ca-publisher.js';
import { ResourceDeleteService } from '../resource-store/resource-delete.service.js';
import { CsrCleaner } from '../certificates/csr-cleaner.js';
import { KubeApiserverClientSigner } from '../certificates/kube-apiserver-client-signer.js';
import { rootCaBundle } from '../certificates/root-ca-bundle.js';

/**
 * The certificate controllers of the ControllerManager: the root CA
 * publisher (`kube-root-ca.crt` in every namespace of every tenant), the
 * `kubernetes.io/kube-apiserver-client` signer of CertificateSigningRequests
 * (signing with the generated CA, binding each certificate to its tenant)
 * and the cleaner of old requests.
 */
@Module({
  imports: [ResourceStoreModule],
  providers: [
    {
      provide: RootCaPublisher,
      useFactory: (
        pki: ServingPki,
        registry: ResourceRegistry,
        store: ResourceStoreService,
        objects: Storage,
        lists: Storage,
        tenants: TenantRepository,
        observe: ObserveChanges,
        logger: Logger,
        hooks: StoreHooks,
        manager: ControllerManager,
      ) => {
        const namespaces = async () => {
          const all: Array<{ tenant: string; name: string }> = [];
          for (const tenant of await tenants.list()) {
            for (const ns of (await lists.list({ tenant, resource: 'namespaces' })).items) all.push({ tenant, name: ns.key.name });
          }
          return all;
        };
        const publisher = new RootCaPublisher({ rootCa: rootCaBundle(pki), registry, store, objects, namespaces, observe, logger, queues: manager });
        hooks.afterCreate('namespaces', publisher.namespaceCreated);
        manager.register(publisher);
        return publisher;
      },
      inject: [SERVING_PKI, ResourceRegistry, ResourceStoreService, STORAGE, STORAGE, TenantRepository, OBSERVE_CHANGES, LOGGER, StoreHooks, ControllerManager],
    },
    {
      provide: KubeApiserverClientSigner,
      useFactory: (pki: ServingPki, registry: ResourceRegistry, store: ResourceStoreService, objects: Storage, lists: Storage, tenants: TenantRepository, observe: ObserveChanges, logger: Logger, manager: ControllerManager) => {
        const signer = new KubeApiserverClientSigner({ ca: pki.ca, registry, store, objects, lists, tenants: () => tenants.list(), tenantUid: async (t) => (await tenants.get(t))?.uid, observe, logger, queues: manager });
        manager.register(signer);
        return signer;
      },
      inject: [SERVING_PKI, ResourceRegistry, ResourceStoreService, STORAGE, STORAGE, TenantRepository, OBSERVE_CHANGES, LOGGER, ControllerManager],
    },
    {
      provide: CsrCleaner,
      useFactory: (registry: ResourceRegistry, lists: Storage, deleter: ResourceDeleteService, tenants: TenantRepository, logger: Logger, manager: ControllerManager) => {
        const cleaner = new CsrCleaner({ registry, lists, deleter, tenants: () => tenants.list(), logger });
        manager.register(cleaner);
        return cleaner;
      },
      inject: [ResourceRegistry, STORAGE, ResourceDeleteService, TenantRepository, LOGGER, ControllerManager],
    },
  ],
  exports: [RootCaPublisher, KubeApiserverClientSigner, CsrCleaner],
})
export class CertificatesModule {}
