import 'reflect-metadata';
import { type DynamicModule, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import type { Logger } from 'pino';
import os from 'node:os';
import { AdmissionChain, NamespaceLifecycleModule, WebhookEgressModule, WebhookEgressPolicy } from '@plinth/admission';
import { createPolicyAdmission } from './admission/policy-admission.js';
import { policyAuthorizer } from './admission/policy-authorizer.js';
import { createWebhookAdmission, equivalents, normalizer } from './admission/webhook-admission.js';
import {
  ChangeLogRepository,
  createDatabase,
  ObjectListRepository,
  ObjectStoreRepository,
  OwnerRepository,
  QuotaRepository,
  TenantRepository,
} from '@plinth/storage';
import { createAuthentication, type PreparedAuthentication } from './authn/authentication.factory.js';
import { installRequestAuthentication } from './authn/request-authentication.hook.js';
import { ServiceAccountIssuerController } from './authn/service-account-issuer.controller.js';
import { createAuthorization } from './authz/authorization.factory.js';
import { OwnerReferencesPermissionModule } from './authz/owner-references.admission.js';
import type { AppConfig } from './config/app-config.js';
import { createCrdSupport, type ObserveChanges } from './crd/crd-support.js';
import { customResourceDefinitionResource } from './crd/crd-resource.js';
import type { ServingPki } from './pki/pki-store.js';
import { StatusExceptionFilter } from './errors/status.filter.js';
import { HealthController } from './health.controller.js';
import { GracefulShutdown } from './lifecycle/graceful-shutdown.js';
import { clientErrorStatus, frameworkErrorStatus, registerRequestGuards } from './http/request-guards.js';
import { PinoNestLogger } from './observability/logger.js';
import { Metrics } from './observability/metrics.js';
import { PLINTH_SERVICES, type PlinthServices } from './plinth-services.js';
import { isPlainObject } from '@plinth/apimachinery';
import { ResourceRegistry } from './registry/resource-registry.js';
import { builtinResources } from './registry/builtin-resources.js';
import { ResourceController } from './resource.controller.js';
import { ResourceDeleteService } from './store/resource-delete.service.js';
import { TenantValidationBudget } from './store/validation-budget.js';
import { ResourceStoreService } from './store/resource-store.service.js';
import { WatchService } from './watch/watch.service.js';
import { TenantCache } from './tenant-cache.js';
import { TenantLifecycleModule } from './tenancy/tenant-lifecycle.admission.js';
import { createTenancySupport } from './tenancy/tenancy-support.js';
import { FairQueuing } from './flowcontrol/fair-queuing.js';
import { installFlowControl } from './flowcontrol/flow-control.hook.js';
import { flowMetrics } from './flowcontrol/flow-metrics.js';
import { TenantFlowLimits } from './flowcontrol/tenant-flow-limits.js';
import { QuotaSupport } from './quota/quota-support.js';
import { GarbageCollector } from './gc/garbage-collector.js';
import { NamespaceDeletionController } from './namespace/namespace-deletion.controller.js';
import { resourceQuotaResource } from './quota/resource-quota.resource.js';
import { installAudit } from './audit/audit.hook.js';
import { AuditLogWriter } from './audit/audit-log.writer.js';
import { AuditPolicy } from './audit/audit-policy.js';

/** Request bodies above this are refused with 413, as kube-apiserver's 3 MiB limit. */
export const MAX_BODY_BYTES = 3 * 1024 * 1024;

/** The platform's webhook egress policy: the configured settings, and this host's addresses as its own. */
function webhookEgressPolicy(config: AppConfig): WebhookEgressPolicy {
  const own = Object.values(os.networkInterfaces())
    .flat()
    .flatMap((i) => (i ? [i.address] : []));
  if (config.host !== '0.0.0.0' && config.host !== '::') own.push(config.host);
  return new WebhookEgressPolicy({ allowPrivateNetworks: config.webhookAllowPrivateNetworks, trustedTenants: config.webhookTrustedTenants, ownAddresses: own });
}

/** Builds every service of one server instance over `databaseUrl`. The caller owns `db` and must destroy it. */
export function buildServices(config: AppConfig, databaseUrl: string, logger: Logger, auth: PreparedAuthentication): PlinthServices {
  const db = createDatabase({
    connectionString: databaseUrl,
    maxConnections: config.dbPoolSize,
    onPoolError: (err) => logger.warn({ err: err.message }, 'database connection error'),
  });
  const metrics = new Metrics();
  const objects = new ObjectStoreRepository(db, { onBatch: (size) => metrics.writeBatchSize.observe(size) });
  const lists = new ObjectListRepository(db);
  // Gated group versions (alpha APIs) are served only when the runtime configuration enables them.
  const registry = new ResourceRegistry(builtinResources.filter((d) => config.runtimeConfig.serves(d.group ? `${d.group}/${d.version}` : d.version)));
  config.featureGates.register(metrics.registry);
  // Upstream's plugin runs only with its gate on (and its API served, or no policy could exist).
  const mutatingPolicies = config.featureGates.enabled('MutatingAdmissionPolicy') && config.runtimeConfig.serves('admissionregistration.k8s.io/v1alpha1');
  const egress = webhookEgressPolicy(config);
  const changes = new ChangeLogRepository(db);
  const watch = new WatchService({ config, logger, registry: metrics.registry, db, changes, lists, databaseUrl });
  // CRDs and webhook configurations are cached on every replica, fed by its change stream.
  const observe: ObserveChanges = (resource, observer) => watch.pipeline.cache.observe(resource, observer);
  const webhooks = createWebhookAdmission({
    egress,
    registry,
    objects,
    lists,
    logger,
    metricsRegistry: metrics.registry,
    serviceMap: config.webhookServiceMap,
    refreshMs: config.webhookRefreshMs,
    observe,
  });
  const policies = createPolicyAdmission({
    registry,
    objects,
    lists,
    logger,
    metricsRegistry: metrics.registry,
    equivalentResources: equivalents(registry),
    normalizePatched: normalizer(registry),
    // Read at request time: the store (and its budget) is built below.
    meter: (tenant, evaluate) => (store.validationBudget ? store.validationBudget.run(tenant, evaluate) : evaluate()),
    // Read at request time: authorization is built below.
    authorizer: (attrs) => policyAuthorizer(authz.authorizer, attrs),
  });
  const nsDef = registry.lookup('default', '', 'v1', 'namespaces')!;
  const tenants = new TenantRepository(db);
  const tenantCache = new TenantCache(tenants);
  const authz = createAuthorization({ logger, lists, tenantExists: (t) => tenantCache.exists(t), registry, cache: () => watch.cache });
  const admission = new AdmissionChain([
    // Upstream checks RBAC escalation in the RBAC storage, before admission.
    authz.escalation,
    new TenantLifecycleModule(async (tenant) => (await tenantCache.get(tenant))?.phase),
    new NamespaceLifecycleModule(async (tenant, namespace) => {
      const ns = await objects.get(ResourceStoreService.key(tenant, nsDef, '', namespace), undefined, true);
      if (!ns) return undefined;
      const status = ns.body.status;
      return isPlainObject(status) && status.phase === 'Terminating' ? 'Terminating' : 'Active';
    }),
    new WebhookEgressModule(egress),
    new OwnerReferencesPermissionModule(authz.authorizer, registry),
    // Upstream's default plugin order: policies, then webhooks, in each phase.
    ...(mutatingPolicies ? [policies.mutating] : []),
    webhooks.mutating,
    policies.validating,
    webhooks.validating,
  ]);
  // Read-your-writes for kinds every replica caches: a write is answered once this replica serves it.
  const store = new ResourceStoreService(objects, admission, async (def, key, revision) => {
    await watch.pipeline.waitApplied(revision);
    if (def === customResourceDefinitionResource) await crds.settled(key.tenant, key.name);
  });
  store.validationBudget = new TenantValidationBudget({ msPerSecond: config.tenantValidationMsPerSecond, burstMs: config.tenantValidationMsPerSecond * 10 });
  const deleter = new ResourceDeleteService(objects, lists, store, registry);
  store.afterRemove = async (tenant, namespace) => {
    if (namespace) await deleter.finalizeNamespaceIfEmpty(tenant, namespace);
  };
  const tenancy = createTenancySupport({ tenants, cache: tenantCache, registry, objects, lists, store, deleter, logger });
  const crds = createCrdSupport({ registry, lists, store, deleter, logger, observe });
  authz.attachStore(store);
  tenancy.provisioner.ensureDefaultRbac = async (tenant) => {
    await authz.ensureDefaultRbac(tenant);
  };
  policies.attach(watch.cache);
  const quotas = new QuotaSupport({ quotas: new QuotaRepository(db), registry, store, logger });
  const namespaces = new NamespaceDeletionController({ deleter, objects, logger });
  deleter.namespaceTerminating = namespaces.enqueue;
  const gc = new GarbageCollector({ owners: new OwnerRepository(db), registry, store, deleter, observe, logger });
  store.afterCreate.set(resourceQuotaResource.storageResource, quotas.afterWrite);
  store.afterUpdate.set(resourceQuotaResource.storageResource, quotas.afterWrite);
  const flowLimits = new TenantFlowLimits({ concurrency: config.tenantConcurrentRequests, queueLength: config.tenantQueueLength }, lists, observe);
  return {
    config,
    logger,
    db,
    metrics,
    registry,
    objects,
    lists,
    changes,
    tenants,
    admission,
    store,
    deleter,
    watch,
    webhooks,
    policies,
    crds,
    tenancy,
    shutdown: new GracefulShutdown(),
    authn: createAuthentication(config, logger, auth, objects, registry, observe),
    authz,
    flowLimits,
    quotas,
    gc,
    namespaces,
    flow: new FairQueuing((t) => flowLimits.limitsOf(t), config.tenantQueueWaitMs, flowMetrics(metrics.registry), config.maxRequestsInflight),
  };
}

/** The audit policy and log when both are configured (a bad policy stops start-up). */
function auditLog(services: PlinthServices): { policy: AuditPolicy; writer: AuditLogWriter } | undefined {
  const { config, metrics } = services;
  if (!config.auditPolicyFile || !config.auditLogPath) return undefined;
  const policy = AuditPolicy.fromFile(config.auditPolicyFile);
  const writer = new AuditLogWriter({
    path: config.auditLogPath,
    maxBytes: config.auditLogMaxSizeMiB * 1024 * 1024,
    maxBackups: config.auditLogMaxBackups,
    maxBufferedBytes: 16 * 1024 * 1024,
    dropped: () => metrics.auditDropped.inc(),
  });
  return { policy, writer };
}

function appModule(services: PlinthServices): DynamicModule {
  @Module({})
  class AppModule {}
  return {
    module: AppModule,
    controllers: [HealthController, ServiceAccountIssuerController, ResourceController],
    providers: [{ provide: PLINTH_SERVICES, useValue: services }],
  };
}

/**
 * Creates the NestJS application on Fastify over HTTPS (HTTP/2 by ALPN,
 * HTTP/1.1 fallback, TLS 1.2+, client certificates requested and verified
 * against the client CA but not required) with Plinth's body handling (raw
 * bodies up to 3 MiB, decoded by the handlers), authentication before any
 * handler, the Status error filter, request metrics and logs. Not yet listening.
 */
export async function createApp(services: PlinthServices, pki: ServingPki): Promise<NestFastifyApplication> {
  const adapter = new FastifyAdapter({
    http2: true,
    https: {
      allowHTTP1: true,
      key: pki.serving.keyPem,
      cert: pki.serving.certPem,
      ca: pki.clientCaPem,
      requestCert: true,
      rejectUnauthorized: false,
      minVersion: 'TLSv1.2',
    },
    bodyLimit: MAX_BODY_BYTES,
    routerOptions: { maxParamLength: 1000 },
    clientErrorHandler: clientErrorStatus,
    frameworkErrors: frameworkErrorStatus,
    // Requests that arrive while draining get a Status from GracefulShutdown, not Fastify's JSON.
    return503OnClosing: false,
  });
  const app = await NestFactory.create<NestFastifyApplication>(appModule(services), adapter, {
    bodyParser: false,
    logger: new PinoNestLogger(services.logger),
  });
  const fastify = app.getHttpAdapter().getInstance();
  fastify.removeAllContentTypeParsers();
  registerRequestGuards(fastify);
  services.shutdown.register(fastify);
  fastify.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: MAX_BODY_BYTES }, (_req, body, done) => done(null, body));
  fastify.addHook('onRequest', async (req) => {
    (req as unknown as { startedAt: bigint }).startedAt = process.hrtime.bigint();
  });
  const audit = auditLog(services);
  if (audit) {
    installAudit(fastify, audit.policy, audit.writer);
    fastify.addHook('onClose', async () => audit.writer.close());
  }
  installRequestAuthentication(fastify, services.authn, services.authz.authorizer, services.logger, services.metrics);
  installFlowControl(fastify, services.flow);
  // Fastify replaces Content-Types it cannot parse (the gnostic protobuf type has an '@');
  // handlers that need one anyway set it here, after Fastify's defaulting.
  fastify.addHook('onSend', async (_req, reply, payload) => {
    const forced = (reply as unknown as { forcedContentType?: string }).forcedContentType;
    if (forced) reply.header('content-type', forced);
    return payload;
  });
  fastify.addHook('onResponse', async (req, reply) => {
    const labels = req.plinth ?? { verb: req.method.toLowerCase(), group: '', resource: '' };
    const started = (req as unknown as { startedAt?: bigint }).startedAt ?? process.hrtime.bigint();
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    services.metrics.requests.inc({ ...labels, code: String(reply.statusCode) });
    services.metrics.latency.observe(labels, seconds);
    services.logger.debug({ method: req.method, url: req.url, code: reply.statusCode, ms: Math.round(seconds * 1000) }, 'request');
  });
  fastify.addHook('onClose', async () => services.webhooks.close());
  app.useGlobalFilters(new StatusExceptionFilter(services.logger));
  await app.init();
  return app;
}
