import { Inject, Module, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { WebhookEgressPolicy } from '@plinth/admission';
import { type Storage, STORAGE } from '@plinth/storage';
import type { Logger } from 'pino';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { TenantCache } from '../kinds/tenant/tenant-cache.js';
import { TENANT_AUTHORIZATION_WEBHOOK_STORAGE_RESOURCE } from '../kinds/authorization/tenant-authorization-webhook.resource.js';
import { LOGGER } from '../observability/logger.js';
import { Metrics } from '../observability/metrics.js';
import { OBSERVE_CHANGES, type ObserveChanges } from '../watch/observe-changes.js';
import { WatchService } from '../watch/watch.service.js';
import { AuthorizationMetrics } from '../authz/authorization-metrics.js';
import { RequestAuthorizer } from '../authz/authorizer-chain.js';
import { type BuiltAuthorizer, buildAuthorizer } from '../authz/authorizer-chain.factory.js';
import { RbacAuthorizer } from '../authz/rbac-authorizer.js';
import { RbacEscalationModule } from '../authz/rbac-escalation.admission.js';
import { RbacIndexService } from '../authz/rbac-index.service.js';
import { ACCESS_REVIEWS, type AccessReviewDeps } from '../authz/reviews/access-review.handler.js';
import { TenantWebhooks } from '../authz/tenant-webhooks.js';

/** The request path's authorizer as built (the chain, its reloader). */
const BUILT_AUTHORIZER = Symbol('BUILT_AUTHORIZER');

/**
 * Authorization: the per-tenant RBAC index (RBAC kinds are cached on every
 * replica and followed through its change stream, so the store's commit
 * barrier gives read-your-writes), the RBAC authorizer, the chain every
 * request, access review and admission check asks (RequestAuthorizer:
 * `system:masters`, then PLINTH_AUTHORIZATION_CONFIG's authorizers or RBAC
 * alone, then the addressed tenant's own webhooks), the reload of that
 * file, upstream's escalation check, and access reviews. Nothing runs until
 * requests arrive; the default policy and aggregation, which write objects,
 * live in rbac/ (RbacModule).
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
    { provide: AuthorizationMetrics, useFactory: (metrics: Metrics) => new AuthorizationMetrics(metrics.registry), inject: [Metrics] },
    {
      provide: TenantWebhooks,
      useFactory: (lists: Storage, egress: WebhookEgressPolicy, metrics: AuthorizationMetrics, logger: Logger) => new TenantWebhooks({ lists, egress, metrics, logger }),
      inject: [STORAGE, WebhookEgressPolicy, AuthorizationMetrics, LOGGER],
    },
    {
      provide: BUILT_AUTHORIZER,
      useFactory: (config: AppConfig, rbac: RbacAuthorizer, tenants: TenantWebhooks, metrics: AuthorizationMetrics, logger: Logger): BuiltAuthorizer =>
        buildAuthorizer(config, rbac, { type: 'Webhook', name: 'tenant', authorizer: tenants }, metrics, logger),
      inject: [APP_CONFIG, RbacAuthorizer, TenantWebhooks, AuthorizationMetrics, LOGGER],
    },
    { provide: RequestAuthorizer, useFactory: (built: BuiltAuthorizer) => built.chain, inject: [BUILT_AUTHORIZER] },
    {
      provide: RbacEscalationModule,
      useFactory: (authorizer: RequestAuthorizer, indexes: RbacIndexService) => new RbacEscalationModule(authorizer, indexes),
      inject: [RequestAuthorizer, RbacIndexService],
    },
    {
      provide: ACCESS_REVIEWS,
      useFactory: (authorizer: RequestAuthorizer, indexes: RbacIndexService): AccessReviewDeps => ({ authorizer, indexes }),
      inject: [RequestAuthorizer, RbacIndexService],
    },
  ],
  exports: [RbacIndexService, RbacAuthorizer, RequestAuthorizer, RbacEscalationModule, ACCESS_REVIEWS],
})
export class AuthzModule implements OnModuleInit, OnApplicationShutdown {
  private unobserve: (() => void) | undefined;

  constructor(
    @Inject(RbacIndexService) private readonly indexes: RbacIndexService,
    @Inject(BUILT_AUTHORIZER) private readonly built: BuiltAuthorizer,
    @Inject(TenantWebhooks) private readonly tenantWebhooks: TenantWebhooks,
    @Inject(OBSERVE_CHANGES) private readonly observe: ObserveChanges,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  onModuleInit(): void {
    this.unobserve = this.observe(TENANT_AUTHORIZATION_WEBHOOK_STORAGE_RESOURCE, this.tenantWebhooks.observer);
    this.built.reloader?.start(this.config.authorizationConfigReloadSeconds * 1000);
  }

  async onApplicationShutdown(): Promise<void> {
    this.unobserve?.();
    this.indexes.clear();
    await this.built.close();
    await this.tenantWebhooks.close();
  }
}
