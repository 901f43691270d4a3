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
import { ROOT_CA_CONFIGMAP, RootCaPublisher } from '../certificates/root-ca-publisher.js';
import { ResourceDeleteService } from '../resource-store/resource-delete.service.js';
import { CsrCleaner } from '../certificates/csr-cleaner.js';
import { KubeApiserverClientSigner } from '../certificates/kube-apiserver-client-signer.js';
import { rootCaBundle } from '../certificates/root-ca-bundle.js';
import { SharedInformerFactory } from '../controllers/shared-informer-factory.js';
import { CSR_STORAGE_RESOURCE } from '../kinds/certificates/csr-api.js';

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
      useFactory: (pki: ServingPki, registry: ResourceRegistry, store: ResourceStoreService, objects: Storage, informers: SharedInformerFactory, logger: Logger, hooks: StoreHooks, manager: ControllerManager) => {
        const publisher = new RootCaPublisher({
          rootCa: rootCaBundle(pki),
          registry,
          store,
          objects,
          namespaces: informers.informerFor({ resource: 'namespaces' }),
          configMaps: informers.informerFor({ resource: 'configmaps', name: ROOT_CA_CONFIGMAP }),
          logger,
          queues: manager,
        });
        hooks.afterCreate('namespaces', publisher.namespaceCreated);
        manager.register(publisher);
        return publisher;
      },
      inject: [SERVING_PKI, ResourceRegistry, ResourceStoreService, STORAGE, SharedInformerFactory, LOGGER, StoreHooks, ControllerManager],
    },
    {
      provide: KubeApiserverClientSigner,
      useFactory: (pki: ServingPki, registry: ResourceRegistry, store: ResourceStoreService, informers: SharedInformerFactory, tenants: TenantRepository, logger: Logger, manager: ControllerManager) => {
        const requests = informers.informerFor({ resource: CSR_STORAGE_RESOURCE });
        const signer = new KubeApiserverClientSigner({ ca: pki.ca, registry, store, requests, tenantUid: async (t) => (await tenants.get(t))?.uid, logger, queues: manager });
        manager.register(signer);
        return signer;
      },
      inject: [SERVING_PKI, ResourceRegistry, ResourceStoreService, SharedInformerFactory, TenantRepository, LOGGER, ControllerManager],
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
