import { Module } from '@nestjs/common';
import { AuthnModule } from './authn.module.js';
import { AuthzModule } from './authz.module.js';
import { ResourceStoreModule } from './resource-store.module.js';
import { ApiSharingModule } from './api-sharing.module.js';
import { ExportView } from '../apisharing/export-view.rest.js';
import { PlatformView } from '../apisharing/platform-view.rest.js';
import { ResourceRegistry } from '../registry/resource-registry.js';
import { TenantRepository } from '@plinth/storage';
import { SnapshotsModule } from './snapshots.module.js';
import { ResourceController } from '../api/resource.controller.js';
import { selfSubjectReviewRest, serviceAccountTokenRest, tokenReviewRest } from '../authn/authentication.rest.js';
import { AuthenticationService } from '../authn/authentication.service.js';
import { ACCESS_REVIEWS, type AccessReviewDeps } from '../authz/reviews/access-review.handler.js';
import { UNSAFE_DELETE, type UnsafeDeleteDeps } from '../handlers/unsafe-delete.js';
import { accessReviewRest } from '../authz/reviews/access-review.rest.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { customResourceScaleRest } from '../crd/scale.rest.js';
import { KindRestRegistry } from '../handlers/kind-rest.js';
import { ResourceStoreService } from '../resource-store/resource-store.service.js';
import { tenantSnapshotRest } from '../snapshots/snapshot.rest.js';
import { TENANT_SNAPSHOTS, type TenantSnapshotService } from '../snapshots/tenant-snapshot.service.js';
import { SNAPSHOT_CATALOG, type SnapshotCatalog } from '../snapshots/snapshot-catalog.js';

/**
 * The resource API: the catch-all controller for `/api/...`, `/apis/...`
 * (and both under `/clusters/{tenant}`), which resolves the request and
 * hands it to the kind's own REST when it has one (the reviews, a
 * ServiceAccount's token, a custom resource's scale, a Tenant's snapshot: {@link KindRestRegistry},
 * listed here) and otherwise to the verb's generic handler (handlers/).
 */
@Module({
  imports: [ResourceStoreModule, AuthnModule, AuthzModule, ApiSharingModule, SnapshotsModule],
  providers: [
    {
      provide: KindRestRegistry,
      useFactory: (
        authn: AuthenticationService,
        reviews: AccessReviewDeps,
        store: ResourceStoreService,
        config: AppConfig,
        exportView: ExportView,
        snapshots: TenantSnapshotService,
        registry: ResourceRegistry,
        tenants: TenantRepository,
        catalog: SnapshotCatalog,
      ) =>
        new KindRestRegistry([
          tokenReviewRest(authn),
          selfSubjectReviewRest(),
          accessReviewRest(reviews),
          serviceAccountTokenRest(store, authn, config.serviceAccountMaxTokenSeconds),
          customResourceScaleRest(store),
          exportView.rest(),
          new PlatformView({ view: exportView, registry, store, authorizer: reviews.authorizer, tenants: () => tenants.list() }).rest(),
          tenantSnapshotRest(snapshots, catalog),
        ]),
      inject: [AuthenticationService, ACCESS_REVIEWS, ResourceStoreService, APP_CONFIG, ExportView, TENANT_SNAPSHOTS, ResourceRegistry, TenantRepository, SNAPSHOT_CATALOG],
    },
    {
      provide: UNSAFE_DELETE,
      useFactory: (reviews: AccessReviewDeps, config: AppConfig): UnsafeDeleteDeps => ({
        enabled: config.featureGates.enabled('AllowUnsafeMalformedObjectDeletion'),
        authorizer: reviews.authorizer,
      }),
      inject: [ACCESS_REVIEWS, APP_CONFIG],
    },
  ],
  controllers: [ResourceController],
})
export class ResourceApiModule {}
