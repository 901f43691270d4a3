import { Inject, Module, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import type { Logger } from 'pino';
import { AdmissionChain, type AdmissionModule, type AdmissionTracer, NamespaceLifecycleModule, WebhookEgressModule, WebhookEgressPolicy } from '@plinth/admission';
import { isPlainObject } from '@plinth/apimachinery';
import { STORAGE, type Storage } from '@plinth/storage';
import { OwnerReferencesPermissionModule } from '../authz/owner-references.admission.js';
import { AuthzModule } from './authz.module.js';
import { RequestAuthorizer } from '../authz/authorizer-chain.js';
import { RbacEscalationModule } from '../authz/rbac-escalation.admission.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { LOGGER } from '../observability/logger.js';
import { NamespaceCache } from '../admission/namespace-cache.js';
import { Metrics } from '../observability/metrics.js';
import { TRACING, type Tracing } from '../observability/tracing.js';
import { ResourceRegistry } from '../registry/resource-registry.js';
import { TenantValidationBudget } from '../admission/validation-budget.js';
import { TenantCache } from '../kinds/tenant/tenant-cache.js';
import { TenantLifecycleModule } from '../admission/tenant-lifecycle.admission.js';
import { OBSERVE_CHANGES, type ObserveChanges } from '../watch/observe-changes.js';
import { WatchService } from '../watch/watch.service.js';
import { objectKey } from '../registry/resource-definition.js';
import { orderedPlugins } from '../admission/admission-order.js';
import { CertificateApprovalModule } from '../kinds/certificates/certificate-approval.admission.js';
import { CertificateSigningModule } from '../kinds/certificates/certificate-signing.admission.js';
import { CertificateSubjectRestrictionModule } from '../kinds/certificates/certificate-subject-restriction.admission.js';
import { ShardCatalog } from '../sharding/shard-catalog.js';
import { ShardPool } from '../sharding/shard-pool.js';
import { TenantDirectory } from '../sharding/tenant-directory.js';
import { TenantPlacementModule } from '../sharding/tenant-placement.admission.js';
import { ShardSecretReferenceModule } from '../sharding/shard-secret-reference.admission.js';
import { createPolicyAdmission, POLICY_ADMISSION, type PolicyAdmission } from '../admission/policy-admission.js';
import { policyAuthorizer, settlePolicyAuthorizer } from '../admission/policy-authorizer.js';
import { ApiBindingAdmission } from '../apisharing/api-binding.admission.js';
import { ApiSharingIndex } from '../apisharing/api-sharing-index.js';
import { CrdRegistry } from '../crd/crd-registry.service.js';
import { createWebhookAdmission, equivalents, normalizer, WEBHOOK_ADMISSION, type WebhookAdmission } from '../admission/webhook-admission.js';

/** The admission chain's and webhook calls' tracing hook, or undefined when tracing is off. */
function admissionTracer(tracing: Tracing | null): AdmissionTracer | undefined {
  return tracing ? { step: (name, attributes, run) => tracing.admissionStep(name, attributes, run) } : undefined;
}

/** Whether MutatingAdmissionPolicy runs: upstream's plugin runs only with its gate on (and its API served, or no policy could exist). */
function mutatingPoliciesEnabled(config: AppConfig): boolean {
  const served = ['v1beta1', 'v1alpha1'].some((v) => config.runtimeConfig.serves(`admissionregistration.k8s.io/${v}`));
  return config.featureGates.enabled('MutatingAdmissionPolicy') && served;
}

/** The replica's namespace cache, read from storage on a miss (internally: the write that follows has its own barrier). */
function namespaceCache(objects: Storage, registry: ResourceRegistry, watch: WatchService): NamespaceCache {
  const nsDef = registry.lookup('default', '', 'v1', 'namespaces')!;
  const cache = new NamespaceCache(async (tenant, name) => (await objects.get(objectKey(tenant, nsDef, '', name), { internal: true }))?.body);
  cache.attach(watch.cache);
  return cache;
}

/** NamespaceLifecycle's view of a namespace: its phase, from the replica's namespace cache. */
function namespacePhase(namespaces: NamespaceCache) {
  return async (tenant: string, namespace: string): Promise<'Active' | 'Terminating' | undefined> => {
    const ns = await namespaces.get(tenant, namespace);
    if (!ns) return undefined;
    const status = ns.status;
    return isPlainObject(status) && status.phase === 'Terminating' ? 'Terminating' : 'Active';
  };
}

/**
 * The admission chain every write passes (see ADMISSION_ORDER): built-in
 * plugins, ValidatingAdmissionPolicy and MutatingAdmissionPolicy, and the
 * admission webhooks with their configuration cache fed by the change
 * stream and their HTTPS client under the egress policy; the chain is
 * logged when the module starts.
 */
@Module({
  imports: [AuthzModule],
  providers: [
    {
      provide: TenantValidationBudget,
      useFactory: (config: AppConfig) => new TenantValidationBudget({ msPerSecond: config.tenantValidationMsPerSecond, burstMs: config.tenantValidationMsPerSecond * 10 }),
      inject: [APP_CONFIG],
    },
    {
      provide: WEBHOOK_ADMISSION,
      useFactory: (config: AppConfig, egress: WebhookEgressPolicy, registry: ResourceRegistry, objects: Storage, lists: Storage, logger: Logger, metrics: Metrics, observe: ObserveChanges, tracing: Tracing | null) =>
        createWebhookAdmission({
          egress,
          registry,
          objects,
          lists,
          logger,
          metricsRegistry: metrics.registry,
          serviceMap: config.webhookServiceMap,
          refreshMs: config.webhookRefreshMs,
          observe,
          tracer: admissionTracer(tracing),
        }),
      inject: [APP_CONFIG, WebhookEgressPolicy, ResourceRegistry, STORAGE, STORAGE, LOGGER, Metrics, OBSERVE_CHANGES, TRACING],
    },
    {
      provide: NamespaceCache,
      useFactory: namespaceCache,
      inject: [STORAGE, ResourceRegistry, WatchService],
    },
    {
      provide: POLICY_ADMISSION,
      useFactory: (
        registry: ResourceRegistry,
        objects: Storage,
        lists: Storage,
        logger: Logger,
        metrics: Metrics,
        budget: TenantValidationBudget,
        authorizer: RequestAuthorizer,
        watch: WatchService,
        namespaces: NamespaceCache,
      ) => {
        const policies = createPolicyAdmission({
          registry,
          objects,
          lists,
          logger,
          metricsRegistry: metrics.registry,
          equivalentResources: equivalents(registry),
          normalizePatched: normalizer(registry),
          meter: (tenant, evaluate) => budget.run(tenant, evaluate),
          authorizer: (attrs) => policyAuthorizer(authorizer, attrs),
          settleAuthorizer: settlePolicyAuthorizer,
          namespaces,
        });
        policies.attach(watch.cache);
        return policies;
      },
      inject: [ResourceRegistry, STORAGE, STORAGE, LOGGER, Metrics, TenantValidationBudget, RequestAuthorizer, WatchService, NamespaceCache],
    },
    {
      provide: AdmissionChain,
      useFactory: (
        config: AppConfig,
        escalation: RbacEscalationModule,
        tenants: TenantCache,
        namespaces: NamespaceCache,
        registry: ResourceRegistry,
        egress: WebhookEgressPolicy,
        authorizer: RequestAuthorizer,
        policies: PolicyAdmission,
        webhooks: WebhookAdmission,
        catalog: ShardCatalog,
        pool: ShardPool,
        directory: TenantDirectory,
        sharing: ApiSharingIndex,
        crds: CrdRegistry,
        tracing: Tracing | null,
      ) => {
        const plugins: AdmissionModule[] = [
          escalation,
          new TenantLifecycleModule(async (tenant) => (await tenants.get(tenant))?.phase),
          new TenantPlacementModule({ catalog, ready: (s) => pool.state(s)?.ready === true, tenantsOn: (s) => directory.tenantsOn(s) }),
          new ShardSecretReferenceModule(authorizer),
          new NamespaceLifecycleModule(namespacePhase(namespaces), (tenant, name) => namespaces.deleting(tenant, name)),
          new ApiBindingAdmission(sharing, crds, authorizer, registry),
          new WebhookEgressModule(egress),
          new OwnerReferencesPermissionModule(authorizer, registry),
          new CertificateApprovalModule(authorizer),
          new CertificateSigningModule(authorizer),
          new CertificateSubjectRestrictionModule(),
          ...(mutatingPoliciesEnabled(config) ? [policies.mutating] : []),
          webhooks.mutating,
          policies.validating,
          webhooks.validating,
        ];
        return new AdmissionChain(orderedPlugins(plugins), admissionTracer(tracing));
      },
      inject: [APP_CONFIG, RbacEscalationModule, TenantCache, NamespaceCache, ResourceRegistry, WebhookEgressPolicy, RequestAuthorizer, POLICY_ADMISSION, WEBHOOK_ADMISSION, ShardCatalog, ShardPool, TenantDirectory, ApiSharingIndex, CrdRegistry, TRACING],
    },
  ],
  exports: [AdmissionChain, TenantValidationBudget, WEBHOOK_ADMISSION, POLICY_ADMISSION],
})
export class AdmissionChainModule implements OnModuleInit, OnApplicationShutdown {
  constructor(
    @Inject(AdmissionChain) private readonly chain: AdmissionChain,
    @Inject(WEBHOOK_ADMISSION) private readonly webhooks: WebhookAdmission,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  onModuleInit(): void {
    this.logger.info({ modules: this.chain.names(), ...this.chain.phases() }, 'admission chain');
  }

  async onApplicationShutdown(): Promise<void> {
    await this.webhooks.close();
  }
}
