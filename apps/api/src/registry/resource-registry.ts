import { builtinResources } from './builtin-resources.js';
import type { ResourceDefinition } from './resource-definition.js';

/**
 * The served resources of each tenant. Built-in kinds are the same for
 * every tenant; later, CRDs add per-tenant definitions. Discovery, OpenAPI
 * and the handlers all read from here, so a kind added here is served
 * everywhere without more code.
 */
export class ResourceRegistry {
  private readonly builtins = new Map<string, ResourceDefinition>();

  constructor(definitions: ResourceDefinition[] = builtinResources) {
    for (const d of definitions) this.builtins.set(ResourceRegistry.key(d.group, d.version, d.resource), d);
  }

  private static key(group: string, version: string, resource: string): string {
    return `${group}/${version}/${resource}`;
  }

  /** The definition served at group/version/resource for the tenant, or undefined. */
  lookup(_tenant: string, group: string, version: string, resource: string): ResourceDefinition | undefined {
    return this.builtins.get(ResourceRegistry.key(group, version, resource));
  }

  /** A string that changes whenever the tenant's set of served resources changes (for caches). */
  signature(tenant: string): string {
    return this.all(tenant)
      .map((d) => `${d.group}/${d.version}/${d.resource}`)
      .join(',');
  }

  /** Every definition served to the tenant, in a stable order. */
  all(_tenant: string): ResourceDefinition[] {
    return [...this.builtins.values()];
  }
}
