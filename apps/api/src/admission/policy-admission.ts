import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import {
  type ApplyConfigurationMerger,
  type ParamKind,
  type ParamStore,
  PolicyCache,
  type PolicyChangeSubscriber,
  type PolicyModuleDependencies,
  MutatingPolicyModule,
  type PolicyObjects,
  ValidatingPolicyModule,
} from '@plinth/admission';
import { type KubeObject, matchesLabels } from '@plinth/apimachinery';
import { type CacheSubscriber, type ChangeSource, type Storage, WatchCache } from '@plinth/storage';
import { objectKey, presentObject, type ResourceDefinition } from '../registry/resource-definition.js';
import type { ResourceRegistry } from '../registry/resource-registry.js';
import { mergeApplyConfiguration } from './apply-configuration.js';
import type { NamespaceCache } from './namespace-cache.js';
import { policyCel } from '../kinds/admissionregistration/policy-cel.adapter.js';
import { PrometheusPolicyMetrics } from './policy-metrics.js';

/** What the policy modules are built from. */
export interface PolicyAdmissionOptions {
  registry: ResourceRegistry;
  objects: Storage;
  lists: Storage;
  logger: Logger;
  metricsRegistry: Registry;
  /** Shared with the webhook modules (matchPolicy Equivalent). */
  equivalentResources: PolicyModuleDependencies['equivalentResources'];
  normalizePatched?: PolicyModuleDependencies['normalizePatched'];
  /** The tenant's share of validation time for CEL evaluation (see TenantValidationBudget). */
  meter?: PolicyModuleDependencies['meter'];
  /** The CEL `authorizer` value of a request (see policyAuthorizer). */
  authorizer?: PolicyModuleDependencies['authorizer'];
  /** Waits for what an `authorizer` value could not answer synchronously (see settlePolicyAuthorizer). */
  settleAuthorizer?: PolicyModuleDependencies['settleAuthorizer'];
  /** Namespaces for namespaceSelector and `namespaceObject` (the replica's shared cache). */
  namespaces: NamespaceCache;
}

/** The policy modules and their cache; `attach` connects the cache to the replica's change stream. */
export interface PolicyAdmission {
  mutating: MutatingPolicyModule;
  validating: ValidatingPolicyModule;
  cache: PolicyCache;
  /** Follows policy changes through `cache` from now on (call once the watch pipeline exists). */
  attach(changes: ChangeSource): void;
}

const GROUP = 'admissionregistration.k8s.io';
const POLICY_RESOURCES = [
  `${GROUP}/validatingadmissionpolicies`,
  `${GROUP}/validatingadmissionpolicybindings`,
  `${GROUP}/mutatingadmissionpolicies`,
  `${GROUP}/mutatingadmissionpolicybindings`,
];

function loader(lists: Storage) {
  const read = async (tenant: string, resource: string) => (await lists.list({ tenant, resource })).items.map((i) => i.body);
  return async (tenant: string): Promise<PolicyObjects> => {
    const [vaps, vapbs, maps, mapbs] = await Promise.all(POLICY_RESOURCES.map((r) => read(tenant, r)));
    return {
      validatingPolicies: vaps as unknown as PolicyObjects['validatingPolicies'],
      validatingBindings: vapbs as unknown as PolicyObjects['validatingBindings'],
      mutatingPolicies: maps as unknown as PolicyObjects['mutatingPolicies'],
      mutatingBindings: mapbs as unknown as PolicyObjects['mutatingBindings'],
    };
  };
}

/** Subscribes to the four policy buckets of a tenant in the replica's watch cache. */
function changeSubscriber(cache: () => ChangeSource | undefined): PolicyChangeSubscriber {
  return (tenant, onChange, onEnd) => {
    const c = cache();
    if (!c) {
      onEnd();
      return () => undefined;
    }
    let ended = false;
    const subs: CacheSubscriber[] = POLICY_RESOURCES.map((resource) => ({
      bucket: WatchCache.bucketKey(tenant, resource),
      onChange: () => onChange(),
      onEnd: () => {
        if (ended) return;
        ended = true;
        for (const s of subs) c.unsubscribe(s);
        onEnd();
      },
    }));
    for (const s of subs) c.subscribe(s);
    return () => {
      ended = true;
      for (const s of subs) c.unsubscribe(s);
    };
  };
}

function splitApiVersion(apiVersion: string): { group: string; version: string } {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? { group: '', version: apiVersion } : { group: apiVersion.slice(0, slash), version: apiVersion.slice(slash + 1) };
}

/** Params are read from storage as the kind serves them (custom resources converted and defaulted). */
function paramStore(registry: ResourceRegistry, objects: Storage, lists: Storage): ParamStore {
  const defOf = (tenant: string, kind: ParamKind): ResourceDefinition | undefined => {
    const { group, version } = splitApiVersion(kind.apiVersion ?? '');
    return registry.all(tenant).find((d) => d.group === group && d.version === version && d.kind === kind.kind);
  };
  return {
    scopeOf: (tenant, kind) => {
      const def = defOf(tenant, kind);
      return def ? { namespaced: def.namespaced } : undefined;
    },
    get: async (tenant, kind, namespace, name) => {
      const def = defOf(tenant, kind);
      if (!def) return undefined;
      const found = await objects.get(objectKey(tenant, def, namespace, name), { internal: true });
      return found ? presentObject(def, found.body as KubeObject) : undefined;
    },
    list: async (tenant, kind, namespace, selector) => {
      const def = defOf(tenant, kind);
      if (!def) return [];
      const page = await lists.list({
        tenant,
        resource: def.storageResource,
        namespace: def.namespaced ? namespace : undefined,
        filter: (body) => matchesLabels(selector, ((body.metadata as { labels?: Record<string, string> } | undefined)?.labels) ?? {}),
      });
      return page.items.map((i) => presentObject(def, i.body as KubeObject));
    },
  };
}

/**
 * Builds the MutatingAdmissionPolicy and ValidatingAdmissionPolicy modules over the tenant's stored
 * policies and bindings: a compiled-policy cache that follows the change
 * stream (see {@link PolicyCache}), params read from storage, namespaces
 * from the replica's NamespaceCache, and per-policy metrics.
 */
export function createPolicyAdmission(o: PolicyAdmissionOptions): PolicyAdmission {
  let changes: ChangeSource | undefined;
  const cache = new PolicyCache(policyCel, loader(o.lists), changeSubscriber(() => changes));
  const namespaceObject = (tenant: string, name: string) => o.namespaces.get(tenant, name);
  const deps: PolicyModuleDependencies = {
    source: cache,
    cel: policyCel,
    params: paramStore(o.registry, o.objects, o.lists),
    namespaceObject,
    namespaceLabels: async (tenant, name) => {
      const ns = await namespaceObject(tenant, name);
      if (!ns) return undefined;
      return ((ns.metadata as { labels?: Record<string, string> } | undefined)?.labels) ?? {};
    },
    equivalentResources: o.equivalentResources,
    normalizePatched: o.normalizePatched,
    metrics: new PrometheusPolicyMetrics(o.metricsRegistry),
    meter: o.meter,
    authorizer: o.authorizer,
    settleAuthorizer: o.settleAuthorizer,
  };
  const merge: ApplyConfigurationMerger = (attrs, object, patch) => {
    const def = o.registry.lookup(attrs.tenant, attrs.resource.group, attrs.resource.version, attrs.resource.resource);
    return mergeApplyConfiguration(def?.schema, object, patch);
  };
  return {
    mutating: new MutatingPolicyModule(deps, merge),
    validating: new ValidatingPolicyModule(deps),
    cache,
    attach: (c) => {
      changes = c;
      cache.clear();
    },
  };
}

/** Injection token of the {@link PolicyAdmission} modules and cache. */
export const POLICY_ADMISSION = Symbol('POLICY_ADMISSION');
