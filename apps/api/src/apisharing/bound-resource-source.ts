import type { DynamicResourceSource, } from '../registry/resource-registry.js';
import type { ResourceDefinition } from '../registry/resource-definition.js';
import type { CrdRegistry } from '../crd/crd-registry.service.js';
import type { ApiSharingIndex } from './api-sharing-index.js';

/**
 * A tenant's dynamic resources: its own CRDs (the CRD cache) and the
 * resources of the APIExports it binds. A bound resource is served with
 * the definitions the CRD cache compiled for the provider's CRD, the same
 * objects for every binding tenant: the schema, CEL rules, printer columns
 * and conversion are the provider's, a change of the provider's CRD reaches
 * every binding tenant with the provider's next compilation, and the
 * consumer cannot change them (it has no CRD of its own for them). Objects
 * are stored under the consumer tenant's key (the definition's
 * storageResource, `group/plural`, in the consumer's tenant), so the
 * consumer's RBAC, admission, quotas and limits see them as its own.
 */
export class BoundResourceSource implements DynamicResourceSource {
  constructor(
    private readonly crds: CrdRegistry,
    private readonly index: ApiSharingIndex,
  ) {}

  /** Loads the tenant's CRDs, the index, and the CRDs of every provider the tenant binds. */
  async prepare(tenant: string): Promise<void> {
    await this.crds.prepare(tenant);
    await this.index.ready();
    const providers = new Set(this.index.bindingsOf(tenant).map((b) => b.ref.path));
    for (const p of providers) if (p !== tenant) await this.crds.prepare(p);
  }

  /** The definitions bound into `tenant` (the provider's compiled versions of each exported CRD); its own CRDs not included. */
  boundDefinitions(tenant: string): ResourceDefinition[] {
    const out: ResourceDefinition[] = [];
    for (const b of this.index.bindingsOf(tenant)) {
      const exp = this.index.exportOf(b.ref.path, b.ref.name);
      if (!exp) continue;
      const defs = this.crds.definitions(b.ref.path);
      for (const r of exp.resources) out.push(...defs.filter((d) => d.group === r.group && d.resource === r.resource));
    }
    return out;
  }

  definitions(tenant: string): ResourceDefinition[] {
    const own = this.crds.definitions(tenant);
    const taken = new Set(own.map((d) => `${d.group}/${d.version}/${d.resource}`));
    return [...own, ...this.boundDefinitions(tenant).filter((d) => !taken.has(`${d.group}/${d.version}/${d.resource}`))];
  }

  lookup(tenant: string, group: string, version: string, resource: string): ResourceDefinition | undefined {
    const own = this.crds.lookup(tenant, group, version, resource);
    if (own) return own;
    const b = this.index.bindingFor(tenant, group, resource);
    return b && b.ref.path !== tenant ? this.crds.lookup(b.ref.path, group, version, resource) : undefined;
  }

  signature(tenant: string): string {
    const bound = this.index.signature(tenant);
    if (bound === '') return this.crds.signature(tenant);
    const providers = [...new Set(this.index.bindingsOf(tenant).map((b) => b.ref.path))].sort();
    return `${this.crds.signature(tenant)}|${bound}|${providers.map((p) => this.crds.signature(p)).join(',')}`;
  }
}
