import type { Logger } from 'pino';
import type { AdmissionChain } from '@plinth/admission';
import type { Database, ObjectListRepository, ObjectStoreRepository, TenantRepository, ChangeLogRepository } from '@plinth/storage';
import type { AuthenticationService } from './authn/authentication.service.js';
import type { Authorization } from './authz/authorization.factory.js';
import type { FairQueuing } from './flowcontrol/fair-queuing.js';
import type { QuotaSupport } from './quota/quota-support.js';
import type { GarbageCollector } from './gc/garbage-collector.js';
import type { NamespaceDeletionController } from './namespace/namespace-deletion.controller.js';
import type { TenantFlowLimits } from './flowcontrol/tenant-flow-limits.js';
import type { AppConfig } from './config/app-config.js';
import type { Metrics } from './observability/metrics.js';
import type { CrdSupport } from './crd/crd-support.js';
import type { ResourceRegistry } from './registry/resource-registry.js';
import type { WebhookAdmission } from './admission/webhook-admission.js';
import type { PolicyAdmission } from './admission/policy-admission.js';
import type { ResourceDeleteService } from './store/resource-delete.service.js';
import type { WatchService } from './watch/watch.service.js';
import type { ResourceStoreService } from './store/resource-store.service.js';
import type { TenancySupport } from './tenancy/tenancy-support.js';
import type { GracefulShutdown } from './lifecycle/graceful-shutdown.js';

/** Injection token of {@link PlinthServices}. */
export const PLINTH_SERVICES = Symbol('PLINTH_SERVICES');

/** The services one server instance wires together (see app.factory.ts). */
export interface PlinthServices {
  config: AppConfig;
  logger: Logger;
  db: Database;
  metrics: Metrics;
  registry: ResourceRegistry;
  objects: ObjectStoreRepository;
  lists: ObjectListRepository;
  changes: ChangeLogRepository;
  tenants: TenantRepository;
  admission: AdmissionChain;
  store: ResourceStoreService;
  deleter: ResourceDeleteService;
  /** The admission webhook modules (also in `admission`), their configuration cache and HTTPS client. */
  webhooks: WebhookAdmission;
  /** ValidatingAdmissionPolicy and MutatingAdmissionPolicy modules (also in `admission`) and their compiled-policy cache. */
  policies: PolicyAdmission;
  /** Watch streams and the change pipeline feeding them; started and stopped by server.ts. */
  watch: WatchService;
  /** CustomResourceDefinitions: the per-tenant CRD cache behind `registry` and the CRD controller; started and stopped by server.ts. */
  crds: CrdSupport;
  /** Tenants: the Tenant kind's lifecycle and the cache of tenant rows; started and stopped by server.ts. */
  tenancy: TenancySupport;
  /** Graceful shutdown: its phase fails /readyz and refuses requests while draining (see server.ts). */
  shutdown: GracefulShutdown;
  /** Authentication (client certificates, tokens, anonymous), impersonation and the request path's authorizer slot. */
  authn: AuthenticationService;
  /** RBAC: the per-tenant index, the authorizer, escalation checks, aggregation, default policy, access reviews. */
  authz: Authorization;
  /** Each tenant's request limits (Tenant spec, else configuration), followed through the change stream. */
  flowLimits: TenantFlowLimits;
  /** ResourceQuota: applies quotas to storage's exact counts, keeps their status current. */
  quotas: QuotaSupport;
  /** Garbage collection by ownerReferences (Background, Foreground, Orphan). */
  gc: GarbageCollector;
  /** Empties and removes Terminating namespaces out of the DELETE request. */
  namespaces: NamespaceDeletionController;
  /** Per-tenant fair queuing of requests (seats, queues, 429). */
  flow: FairQueuing;
}
