import { LRUCache } from 'lru-cache';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import {
  AdmissionError,
  type AdmissionAttributes,
  type AdmissionTracer,
  type EquivalentResource,
  type GroupVersionResource,
  MutatingWebhookModule,
  ServiceResolver,
  ValidatingWebhookModule,
  WebhookClient,
  WebhookConfigurationCache,
  type WebhookConfigurationV1,
  type WebhookEgressPolicy,
  type WebhookKind,
  type WebhookModuleDependencies,
} from '@plinth/admission';
import type { ChangeObserver, Storage } from '@plinth/storage';
import { checkTypes, dropUndeclared } from '../http/decode-object.js';
import { objectKey, groupVersion } from '../registry/resource-definition.js';
import type { ResourceRegistry } from '../registry/resource-registry.js';
import { PrometheusWebhookMetrics } from './webhook-metrics.js';

/** What the webhook modules are built from. */
export interface WebhookAdmissionOptions {
  registry: ResourceRegistry;
  objects: Storage;
  lists: Storage;
  logger: Logger;
  metricsRegistry: Registry;
  /** PLINTH_WEBHOOK_SERVICE_MAP (see docs/admission.md). */
  serviceMap?: string;
  /** How long namespace labels (namespaceSelector) are remembered. Default 500 ms. */
  refreshMs?: number;
  /** Where tenants' webhook URLs may point (unset: anywhere). */
  egress?: WebhookEgressPolicy;
  /** Subscribes the configuration cache to the change stream (WatchCache.observe); returns the unsubscribe function. */
  observe: (resource: string, observer: ChangeObserver) => () => void;
  /** One span per webhook call, its context sent as `traceparent` (unset: tracing off). */
  tracer?: AdmissionTracer;
}

/** The two webhook modules and what they share; `close()` releases the connection pools. */
export interface WebhookAdmission {
  mutating: MutatingWebhookModule;
  validating: ValidatingWebhookModule;
  cache: WebhookConfigurationCache;
  client: WebhookClient;
  close(): Promise<void>;
}

const CONFIG_RESOURCES: Record<WebhookKind, string> = {
  mutating: 'mutatingwebhookconfigurations',
  validating: 'validatingwebhookconfigurations',
};

/** Reads a tenant's configurations of one kind at the newest revision. */
function configurationLoader(registry: ResourceRegistry, lists: Storage) {
  return async (tenant: string, kind: WebhookKind): Promise<WebhookConfigurationV1[]> => {
    const def = registry.lookup(tenant, 'admissionregistration.k8s.io', 'v1', CONFIG_RESOURCES[kind]);
    if (!def) return [];
    const page = await lists.list({ tenant, resource: def.storageResource });
    return page.items.map((i) => i.body as unknown as WebhookConfigurationV1);
  };
}

/** Other versions of the same group/resource the tenant serves (matchPolicy Equivalent). */
export function equivalents(registry: ResourceRegistry) {
  return (tenant: string, r: GroupVersionResource, subresource: string): EquivalentResource[] =>
    registry
      .all(tenant)
      .filter((d) => d.group === r.group && d.resource === r.resource && d.version !== r.version)
      .filter((d) => !subresource || d.subresources.some((s) => s.name === subresource))
      .map((d) => ({ resource: { group: d.group, version: d.version, resource: d.resource }, kind: { group: d.group, version: d.version, kind: d.kind } }));
}

/**
 * Decodes a webhook-patched object as the kind's decoder would: apiVersion
 * and kind must be unchanged, JSON types must fit the schema, undeclared
 * fields are pruned, and a namespaced object keeps the request's namespace.
 * Throws Error (500 InternalError) or AdmissionError 400.
 */
export function normalizer(registry: ResourceRegistry) {
  return (attrs: AdmissionAttributes, patched: Record<string, unknown>): Record<string, unknown> => {
    const def = registry.lookup(attrs.tenant, attrs.resource.group, attrs.resource.version, attrs.resource.resource);
    if (!def) return patched;
    if (patched.apiVersion !== groupVersion(def) || patched.kind !== def.kind) {
      throw new Error(`the patched object is ${String(patched.apiVersion)}, Kind=${String(patched.kind)}, expected ${groupVersion(def)}, Kind=${def.kind}`);
    }
    try {
      checkTypes(patched, def);
    } catch (err) {
      throw new Error(err instanceof Error ? err.message : String(err));
    }
    dropUndeclared(patched, def.schema);
    const meta = patched.metadata as { namespace?: string } | undefined;
    if (def.namespaced && meta && meta.namespace !== attrs.namespace) {
      throw AdmissionError.badRequest('the namespace of the provided object does not match the namespace sent on the request');
    }
    return patched;
  };
}

type LabelLookup = (tenant: string, namespace: string) => Promise<Record<string, string> | undefined>;

const MAX_CACHED_NAMESPACES = 10_000;

/**
 * Namespace labels for namespaceSelector, remembered for `ttlMs` (the same
 * bound as configuration changes, as upstream's namespace informer lags
 * too) so that selector webhooks cost no extra query per request. A missing
 * namespace is never remembered: it may be created the next moment.
 */
function namespaceLabelCache(ttlMs: number, lookup: LabelLookup): LabelLookup {
  const cache = new LRUCache<string, Record<string, string>>({ max: MAX_CACHED_NAMESPACES, ttl: ttlMs });
  return async (tenant, namespace) => {
    const key = `${tenant}/${namespace}`;
    const hit = cache.get(key);
    if (hit) return hit;
    const labels = await lookup(tenant, namespace);
    if (labels !== undefined) cache.set(key, labels);
    else cache.delete(key);
    return labels;
  };
}

/**
 * Builds MutatingAdmissionWebhook and ValidatingAdmissionWebhook over the
 * tenant's stored configurations: a configuration cache fed by the change
 * stream (a change takes effect on a replica as soon as its stream applies
 * it; on the replica that took the write, before the write is answered), namespace
 * labels read from storage, the service map, re-validation of patched
 * objects, and Prometheus metrics per webhook.
 */
export function createWebhookAdmission(o: WebhookAdmissionOptions): WebhookAdmission {
  const cache = new WebhookConfigurationCache(configurationLoader(o.registry, o.lists));
  const unobserve = Object.values(CONFIG_RESOURCES).map((resource) => o.observe(`admissionregistration.k8s.io/${resource}`, cache.observer));
  const client = new WebhookClient();
  const nsDef = o.registry.lookup('default', '', 'v1', 'namespaces');
  const deps: WebhookModuleDependencies = {
    source: cache,
    client,
    services: ServiceResolver.parse(o.serviceMap),
    egress: o.egress,
    metrics: new PrometheusWebhookMetrics(o.metricsRegistry),
    logger: o.logger,
    namespaceLabels: namespaceLabelCache(o.refreshMs ?? 500, async (tenant, namespace) => {
      if (!nsDef) return undefined;
      // An internal read (no durability wait), as NamespaceLifecycle's: the write that follows has its own barrier.
      const ns = await o.objects.get(objectKey(tenant, nsDef, '', namespace), { internal: true });
      if (!ns) return undefined;
      const labels = (ns.body.metadata as { labels?: Record<string, string> } | undefined)?.labels;
      return labels ?? {};
    }),
    equivalentResources: equivalents(o.registry),
    normalizePatched: normalizer(o.registry),
    tracer: o.tracer,
  };
  return {
    mutating: new MutatingWebhookModule(deps),
    validating: new ValidatingWebhookModule(deps),
    cache,
    client,
    close: async () => {
      for (const u of unobserve) u();
      await client.close();
    },
  };
}

/** Injection token of the {@link WebhookAdmission} modules, cache and client. */
export const WEBHOOK_ADMISSION = Symbol('WEBHOOK_ADMISSION');
