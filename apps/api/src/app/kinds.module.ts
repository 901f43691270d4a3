import { Global, Inject, Module, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import type { Logger } from 'pino';
import { STORAGE, type Storage, TenantRepository } from '@plinth/storage';
import { ServiceResolver, WebhookClient, WebhookEgressPolicy } from '@plinth/admission';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { CrdRegistry } from '../crd/crd-registry.service.js';
import { CRD_STORAGE_RESOURCE } from '../kinds/customresourcedefinition/crd.resource.js';
import { ConversionMetrics } from '../crd/conversion/conversion-metrics.js';
import { ConversionWebhookCaller } from '../crd/conversion/conversion-webhook.js';
import { Metrics } from '../observability/metrics.js';
import { LOGGER } from '../observability/logger.js';
import { PLATFORM_TENANT } from '../kinds/tenant/tenant-api.js';
import { tenantResource, tenantResourceV1beta1 } from '../kinds/tenant/tenant.resource.js';
import { shardResource } from '../kinds/shard/shard.resource.js';
import { OBSERVE_CHANGES, type ObserveChanges } from '../watch/observe-changes.js';
import { builtinResources } from './builtin-kinds.js';
import { ResourceRegistry } from '../registry/resource-registry.js';
import { featureStageIn } from '../registry/strategy-context.js';
import { FEATURE_GATE_STORAGE_RESOURCE } from '../kinds/feature-gate/feature-gate.schema.js';
import { TenantFeatureGates } from '../kinds/feature-gate/tenant-feature-gates.js';
import { ApiSharingIndex } from '../apisharing/api-sharing-index.js';
import { BoundResourceSource } from '../apisharing/bound-resource-source.js';
import { APIBINDING_STORAGE_RESOURCE, APIEXPORT_STORAGE_RESOURCE } from '../kinds/apis/apis.schema.js';

/**
 * The served resources of every tenant (global: every concern reads the
 * registry): the built-in kinds of the group versions the runtime
 * configuration enables (one folder per kind under kinds/), the platform
 * scope's Tenant and Shard kinds, and each tenant's CRDs from the CRD cache, which
 * follows the change stream from module start (with the caller of CRD
 * conversion webhooks its compiled versions use); and the tenants' own
 * feature gates (FeatureGate objects). A tenant's dynamic kinds include
 * the resources of the APIExports it binds (apisharing/, the index of every
 * tenant's exports and bindings, fed by the change stream too).
 */
@Global()
@Module({
  providers: [
    { provide: TenantFeatureGates, useFactory: (lists: Storage) => new TenantFeatureGates(lists), inject: [STORAGE] },
    {
      provide: ConversionWebhookCaller,
      // CRD conversion webhooks: the admission webhooks' HTTPS client, service map and egress policy.
      useFactory: (config: AppConfig, egress: WebhookEgressPolicy, metrics: Metrics, logger: Logger) =>
        new ConversionWebhookCaller({ client: new WebhookClient(), services: ServiceResolver.parse(config.webhookServiceMap), egress, metrics: new ConversionMetrics(metrics.registry), logger }),
      inject: [APP_CONFIG, WebhookEgressPolicy, Metrics, LOGGER],
    },
    {
      provide: CrdRegistry,
      // Descriptions of x-plinth-feature-gate fields name the gate's stage: the server's, else the tenant's own.
      useFactory: (lists: Storage, logger: Logger, config: AppConfig, tenantFeatures: TenantFeatureGates, conversionWebhooks: ConversionWebhookCaller) =>
        new CrdRegistry(lists, {
          logger,
          featureStage: (tenant, gate) => featureStageIn({ features: config.featureGates, tenantFeatures }, tenant, gate),
          prepareFeatures: (tenant) => tenantFeatures.prepare(tenant),
          conversionWebhooks,
        }),
      inject: [STORAGE, LOGGER, APP_CONFIG, TenantFeatureGates, ConversionWebhookCaller],
    },
    {
      provide: ApiSharingIndex,
      useFactory: (lists: Storage, tenants: TenantRepository) => new ApiSharingIndex(lists, () => tenants.list()),
      inject: [STORAGE, TenantRepository],
    },
    {
      provide: ResourceRegistry,
      useFactory: (config: AppConfig, crds: CrdRegistry, index: ApiSharingIndex) =>
        new ResourceRegistry(
          // Gated group versions (alpha APIs) are served only when the runtime configuration enables them.
          builtinResources.filter((d) => config.runtimeConfig.serves(d.group ? `${d.group}/${d.version}` : d.version)),
          { scoped: { [PLATFORM_TENANT]: [tenantResourceV1beta1, tenantResource, shardResource].filter((d) => config.runtimeConfig.serves(`${d.group}/${d.version}`)) }, dynamic: new BoundResourceSource(crds, index) },
        ),
      inject: [APP_CONFIG, CrdRegistry, ApiSharingIndex],
    },
  ],
  exports: [ResourceRegistry, CrdRegistry, TenantFeatureGates, ApiSharingIndex],
})
export class KindsModule implements OnModuleInit, OnApplicationShutdown {
  private unobserve: (() => void)[] = [];

  constructor(
    @Inject(CrdRegistry) private readonly crds: CrdRegistry,
    @Inject(TenantFeatureGates) private readonly tenantFeatures: TenantFeatureGates,
    @Inject(OBSERVE_CHANGES) private readonly observe: ObserveChanges,
    @Inject(ConversionWebhookCaller) private readonly conversionWebhooks: ConversionWebhookCaller,
    @Inject(ApiSharingIndex) private readonly sharing: ApiSharingIndex,
  ) {}

  onModuleInit(): void {
    this.unobserve = [
      this.observe(CRD_STORAGE_RESOURCE, this.crds.observer),
      // Tenants' own FeatureGate objects: kept current, and a change recompiles the tenant's CRDs (gated fields' descriptions).
      this.observe(FEATURE_GATE_STORAGE_RESOURCE, this.tenantFeatures.observer),
      this.observe(FEATURE_GATE_STORAGE_RESOURCE, this.crds.observer),
      // Exports and bindings of every tenant: which tenant is served which provider's CRDs.
      this.observe(APIEXPORT_STORAGE_RESOURCE, this.sharing.observer),
      this.observe(APIBINDING_STORAGE_RESOURCE, this.sharing.observer),
    ];
  }

  async onApplicationShutdown(): Promise<void> {
    for (const u of this.unobserve) u();
    this.unobserve = [];
    await this.conversionWebhooks.close();
  }
}
