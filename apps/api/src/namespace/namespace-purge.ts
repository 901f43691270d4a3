import { ApiError, isPlainObject, type KubeObject, rfc3339Now } from '@plinth/apimachinery';
import type { ObjectStoreRepository, Storage } from '@plinth/storage';
import type { ResourceDefinition } from '../registry/resource-definition.js';
import type { ResourceRegistry } from '../registry/resource-registry.js';
import { NAMESPACE_FINALIZER, namespaceFinalizeStrategy, namespaceFinalizers } from '../kinds/namespace/namespace.strategy.js';
import { applyNamespaceDeletionConditions, type ContentDeletionResult } from './namespace-conditions.js';
import { forEachConcurrently } from '../resource-store/bounded-concurrency.js';
import { ResourceStoreService } from '../resource-store/resource-store.service.js';
import type { WriteContext } from '../resource-store/write-context.js';

/** Deletes one object as the API server does (finalizers respected); what ResourceDeleteService.delete offers. */
export type DeleteOne = (ctx: WriteContext, name: string, pre: { propagation: 'Background' }) => Promise<unknown>;

/** Where one pass of the namespace controller left a namespace. */
export type PurgeOutcome = 'absent' | 'not-deleting' | 'waiting' | 'finalized';

/** Deletes one pass keeps in flight (upstream's controller deletes a kind's objects with one deletecollection). */
const DELETES_IN_FLIGHT = 8;

/** The user the namespace controller acts as (upstream's service account name). */
const CONTROLLER_USER = { username: 'system:serviceaccount:kube-system:namespace-controller', groups: ['system:masters', 'system:authenticated'] };

/** `/v1, Resource=configmaps`, as upstream prints a GroupVersionResource. */
function gvrString(def: ResourceDefinition): string {
  return `${def.group}/${def.version}, Resource=${def.resource}`;
}

function bump(counts: Map<string, number>, key: string, by = 1): void {
  counts.set(key, (counts.get(key) ?? 0) + by);
}

/**
 * One pass of upstream's namespace controller over a deleting namespace
 * (namespaced_resources_deleter.go): make sure the phase is Terminating;
 * delete every object of every namespaced kind that can be deleted
 * (finalizers respected, dependents in the background); record on the
 * namespace the five deletion conditions; and once nothing is left, take
 * the `kubernetes` finalizer off through the `finalize` subresource, which
 * removes the namespace when no other finalizer holds it. Idempotent: any
 * replica may run it any number of times.
 */
export class NamespacePurge {
  constructor(
    private readonly deps: {
      /** Concrete: resourcesInNamespace (the distinct resources of a namespace) is PostgreSQL's, not the Storage interface's. */
      objects: ObjectStoreRepository;
      lists: Storage;
      store: ResourceStoreService;
      registry: ResourceRegistry;
      deleteOne: DeleteOne;
    },
  ) {}

  /** Runs one pass over namespace `name` of `tenant`. Throws only for storage failures. */
  async run(tenant: string, name: string): Promise<PurgeOutcome> {
    const nsDef = this.deps.registry.lookup(tenant, '', 'v1', 'namespaces');
    if (!nsDef) return 'absent';
    const ctx = this.controllerContext(tenant, nsDef, '');
    const stored = await this.deps.objects.get(ResourceStoreService.key(tenant, nsDef, '', name), { internal: true });
    if (!stored) return 'absent';
    let ns = stored.body as KubeObject;
    if (!ns.metadata.deletionTimestamp) return 'not-deleting';
    if (!isPlainObject(ns.status) || ns.status.phase !== 'Terminating') {
      ns = await this.deps.store.systemUpdate(ctx, name, (o) => {
        o.status = { ...(isPlainObject(o.status) ? o.status : {}), phase: 'Terminating' };
      });
    }
    // Another finalizer's owner finishes the job (or has): nothing of ours is left to do.
    if (!namespaceFinalizers(ns).includes(NAMESPACE_FINALIZER)) return 'waiting';
    const result = await this.deleteAllContent(tenant, name);
    await this.recordConditions(ctx, name, result);
    if (result.contentErrors.length > 0 || result.remainingByResource.size > 0) return 'waiting';
    await this.finalize(ctx, name);
    return 'finalized';
  }

  /** Deletes what it can in the namespace and reports what is left (and why). */
  private async deleteAllContent(tenant: string, namespace: string): Promise<ContentDeletionResult> {
    const result: ContentDeletionResult = { contentErrors: [], remainingByResource: new Map(), remainingByFinalizer: new Map() };
    const present = new Set(await this.deps.objects.resourcesInNamespace(tenant, namespace));
    for (const def of this.deletableKinds(tenant)) {
      if (!present.has(def.storageResource)) continue;
      const ctx = this.controllerContext(tenant, def, namespace);
      try {
        await this.deleteEach(ctx, def, namespace);
      } catch (err) {
        result.contentErrors.push((err as Error).message);
        continue;
      }
      const left = (await this.deps.lists.list({ tenant, resource: def.storageResource, namespace })).items;
      if (left.length === 0) continue;
      bump(result.remainingByResource, `${def.resource}.${def.group}`, left.length);
      let held = 0;
      for (const item of left) {
        const finalizers = (item.body as KubeObject).metadata.finalizers ?? [];
        for (const f of finalizers) bump(result.remainingByFinalizer, f);
        if (finalizers.length > 0) held++;
      }
      if (held === 0) result.contentErrors.push(`unexpected items still remain in namespace: ${namespace} for gvr: ${gvrString(def)}`);
    }
    return result;
  }

  private async deleteEach(ctx: WriteContext, def: ResourceDefinition, namespace: string): Promise<void> {
    const page = await this.deps.lists.list({ tenant: ctx.tenant, resource: def.storageResource, namespace });
    const live = page.items.filter((item) => !(item.body as KubeObject).metadata.deletionTimestamp);
    await forEachConcurrently(live, DELETES_IN_FLIGHT, async (item) => {
      try {
        await this.deps.deleteOne(ctx, item.key.name, { propagation: 'Background' });
      } catch (err) {
        if (!(err instanceof ApiError && (err.code === 404 || err.code === 405))) throw err;
      }
    });
  }

  /** Namespaced kinds that can be deleted, one version per group and resource (the first the registry lists). */
  private deletableKinds(tenant: string): ResourceDefinition[] {
    const seen = new Set<string>();
    return this.deps.registry.all(tenant).filter((def) => {
      const id = `${def.group}/${def.resource}`;
      if (!def.namespaced || !def.verbs.includes('delete') || seen.has(id)) return false;
      seen.add(id);
      return true;
    });
  }

  private async recordConditions(ctx: WriteContext, name: string, result: ContentDeletionResult): Promise<void> {
    const now = rfc3339Now();
    const current = await this.deps.store.get(ctx.tenant, ctx.def, '', name);
    // Only write when a condition changes: a namespace waiting on finalizers is looked at again and again.
    if (!applyNamespaceDeletionConditions(structuredClone(current.body) as KubeObject, result, now)) return;
    await this.deps.store.systemUpdate(ctx, name, (o) => void applyNamespaceDeletionConditions(o, result, now));
  }

  /** PUT namespaces/{name}/finalize without `kubernetes`; the store removes the namespace when nothing else holds it. */
  private async finalize(ctx: WriteContext, name: string): Promise<void> {
    const finalizeCtx: WriteContext = { ...ctx, subresource: 'finalize', options: { kind: 'UpdateOptions', apiVersion: 'meta.k8s.io/v1' } };
    try {
      await this.deps.store.update(finalizeCtx, name, (cur) => {
        cur.spec = { ...(isPlainObject(cur.spec) ? cur.spec : {}), finalizers: namespaceFinalizers(cur).filter((f) => f !== NAMESPACE_FINALIZER) };
        return cur;
      }, namespaceFinalizeStrategy);
    } catch (err) {
      if (!(err instanceof ApiError && err.code === 404)) throw err;
    }
  }

  private controllerContext(tenant: string, def: ResourceDefinition, namespace: string): WriteContext {
    return { tenant, def, namespace, subresource: '', user: CONTROLLER_USER, dryRun: false, options: { kind: 'DeleteOptions', apiVersion: 'meta.k8s.io/v1' }, warnings: [] };
  }
}
