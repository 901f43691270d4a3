import { Inject, Module, type OnApplicationShutdown } from '@nestjs/common';
import { type Storage, STORAGE } from '@plinth/storage';
import { TenantCache } from '../kinds/tenant/tenant-cache.js';
import { WatchService } from '../watch/watch.service.js';
import { RbacAuthorizer } from '../authz/rbac-authorizer.js';
import { RbacEscalationModule } from '../authz/rbac-escalation.admission.js';
import { RbacIndexService } from '../authz/rbac-index.service.js';
import { ACCESS_REVIEWS, type AccessReviewDeps } from '../authz/reviews/access-review.handler.js';

/**
 * Authorization: the per-tenant RBAC index (RBAC kinds are cached on every
 * replica and followed through its change stream, so the store's commit
 * barrier gives read-your-writes), the RBAC authorizer every request and
 * the admission chain ask, upstream's escalation check, and access reviews.
 * Nothing runs until requests arrive; the default policy and aggregation,
 * which write objects, live in rbac/ (RbacModule).
 */
@Module({
  providers: [
    {
      provide: RbacIndexService,
      useFactory: (watch: WatchService, lists: Storage, tenants: TenantCache) =>
        new RbacIndexService({
          cache: () => watch.cache,
          lists,
          tenantUid: async (t) => (await tenants.get(t))?.uid,
          peekTenantUid: (t) => {
            const row = tenants.peek(t);
            return row === null ? null : row?.uid;
          },
        }),
      inject: [WatchService, STORAGE, TenantCache],
    },
    { provide: RbacAuthorizer, useFactory: (indexes: RbacIndexService) => new RbacAuthorizer(indexes), inject: [RbacIndexService] },
    {
      provide: RbacEscalationModule,
      useFactory: (authorizer: RbacAuthorizer, indexes: RbacIndexService) => new RbacEscalationModule(authorizer, indexes),
      inject: [RbacAuthorizer, RbacIndexService],
    },
    {
      provide: ACCESS_REVIEWS,
      useFactory: (authorizer: RbacAuthorizer, indexes: RbacIndexService): AccessReviewDeps => ({ authorizer, indexes }),
      inject: [RbacAuthorizer, RbacIndexService],
    },
  ],
  exports: [RbacIndexService, RbacAuthorizer, RbacEscalationModule, ACCESS_REVIEWS],
})
export class AuthzModule implements OnApplicationShutdown {
  constructor(@Inject(RbacIndexService) private readonly indexes: RbacIndexService) {}

  onApplicationShutdown(): void {
    this.indexes.clear();
  }
}
