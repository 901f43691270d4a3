import type { ResourceDefinition } from './resource-definition.js';

/** Per-tenant definitions added at runtime (the CRD cache). Synchronous reads of a cache kept fresh by polling. */
export interface DynamicResourceSource {
  /** Makes sure the tenant's definitions are loaded (called once per request before any read). */
  prepare(tenant: string): Promise<void>;
  definitions(tenant: string): ResourceDefinition[];
  lookup(tenant: string, group: string, version: string, resource: string): ResourceDefinition | undefined;
  /** Changes whenever the tenant's dynamic definitions or their schemas change. */
  signature(tenant: string): string;
}

/**
 * The served resources of each tenant. Built-in kinds are the same for
 * every tenant; later, CRDs add per-tenant definitions. Discovery, OpenAPI
 * and the handlers all read from here, so a kind added here is served
 * everywhere without more code.
 */
export class ResourceRegistry {
  private readonly builtins = new Map<string, ResourceDefinition>();
  /** Kinds served to one tenant only (the platform scope's Tenant kind), by tenant. */
  private readonly scoped = new Map<string, Map<string, ResourceDefinition>>();
  private readonly dynamic: DynamicResourceSource | undefined;

  /**
   * `definitions` are served to every tenant; `options.scoped` kinds to one
   * tenant only, as built-in kinds of that tenant (they win over its CRDs on
   * a clash, as the platform scope's Tenant kind); `options.dynamic` adds
   * per-tenant definitions (CRDs), over which built-in kinds win.
   */
  constructor(
    definitions: ResourceDefinition[],
    options: { scoped?: Record<string, ResourceDefinition[]>; dynamic?: DynamicResourceSource } = {},
  ) {
    for (const d of definitions) this.builtins.set(ResourceRegistry.key(d.group, d.version, d.resource), d);
    for (const [tenant, defs] of Object.entries(options.scoped ?? {})) {
      this.scoped.set(tenant, new Map(defs.map((d) => [ResourceRegistry.key(d.group, d.version, d.resource), d])));
    }
    this.dynamic = options.dynamic;
  }

  private static key(group: string, version: string, resource: string): string {
    return `${group}/${version}/${resource}`;
  }

  private fixed(tenant: string, key: string): ResourceDefinition | undefined {
    return this.builtins.get(key) ?? this.scoped.get(tenant)?.get(key);
  }

  /** Loads the tenant's dynamic definitions if needed; call before lookup/all/signature in a request. */
  async prepare(tenant: string): Promise<void> {
    await this.dynamic?.prepare(tenant);
  }

  /** The definition served at group/version/resource for the tenant, or undefined. */
  lookup(tenant: string, group: string, version: string, resource: string): ResourceDefinition | undefined {
    return this.fixed(tenant, ResourceRegistry.key(group, version, resource)) ?? this.dynamic?.lookup(tenant, group, version, resource);
  }

  /** A string that changes whenever the tenant's set of served resources or their schemas change (for caches). */
  signature(tenant: string): string {
    const names = this.all(tenant)
      .map((d) => `${d.group}/${d.version}/${d.resource}`)
      .join(',');
    return this.dynamic ? `${names}|${this.dynamic.signature(tenant)}` : names;
  }

  /** Every definition served to the tenant, in a stable order. */
  all(tenant: string): ResourceDefinition[] {
    const builtins = [...this.builtins.values(), ...(this.scoped.get(tenant)?.values() ?? [])];
    if (!this.dynamic) return builtins;
    return [...builtins, ...this.dynamic.definitions(tenant).filter((d) => !this.fixed(tenant, ResourceRegistry.key(d.group, d.version, d.resource)))];
  }
}
