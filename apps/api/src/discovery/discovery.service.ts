import { createHash } from 'node:crypto';
import { groupVersion, type ResourceDefinition } from '../registry/resource-definition.js';
import type { ResourceRegistry } from '../registry/resource-registry.js';

/** Content-Type of aggregated discovery answers. */
export const AGGREGATED_V2 = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList';

/**
 * Upstream's discovery.StorageVersionHash: base64 of the first 8 bytes of
 * sha256("group/version/kind") of the storage version. Clients (the storage
 * version migrator, kubectl's cache) compare it to notice a storage change.
 */
export function storageVersionHash(group: string, version: string, kind: string): string {
  return createHash('sha256').update(`${group}/${version}/${kind}`).digest().subarray(0, 8).toString('base64');
}

const VERSION_ORDER = (a: string, b: string) => versionPriority(b) - versionPriority(a) || a.localeCompare(b);

/** Kubernetes version priority: GA > beta > alpha, higher numbers first. */
function versionPriority(v: string): number {
  const m = /^v(\d+)(?:(alpha|beta)(\d+))?$/.exec(v);
  if (!m) return 0;
  const major = Number(m[1]);
  const stage = m[2] === 'alpha' ? 1 : m[2] === 'beta' ? 2 : 3;
  return stage * 1e6 + major * 1e3 + (m[3] ? Number(m[3]) : 0);
}

/**
 * Builds discovery documents (legacy and aggregated v2) from the registry,
 * so every served kind, built-in or added later, appears without more code.
 * Pure reads; never throws.
 */
export class DiscoveryService {
  constructor(private readonly registry: ResourceRegistry) {}

  private byGroup(tenant: string): Map<string, Map<string, ResourceDefinition[]>> {
    const groups = new Map<string, Map<string, ResourceDefinition[]>>();
    for (const d of this.registry.all(tenant)) {
      const versions = groups.get(d.group) ?? new Map<string, ResourceDefinition[]>();
      versions.set(d.version, [...(versions.get(d.version) ?? []), d]);
      groups.set(d.group, versions);
    }
    return groups;
  }

  /** `/api`: APIVersions. */
  coreVersions(): Record<string, unknown> {
    return { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress: '' }] };
  }

  /** `/apis`: APIGroupList of every non-core group. */
  groupList(tenant: string): Record<string, unknown> {
    const groups = [...this.byGroup(tenant).entries()]
      .filter(([g]) => g !== '')
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([g, versions]) => this.group(g, [...versions.keys()]));
    return { kind: 'APIGroupList', apiVersion: 'v1', groups };
  }

  private group(name: string, versions: string[]): Record<string, unknown> {
    const sorted = [...versions].sort(VERSION_ORDER);
    const entries = sorted.map((v) => ({ groupVersion: `${name}/${v}`, version: v }));
    return { name, versions: entries, preferredVersion: entries[0] };
  }

  /** `/apis/{group}`: APIGroup, or undefined when the group is not served. */
  apiGroup(tenant: string, name: string): Record<string, unknown> | undefined {
    const versions = this.byGroup(tenant).get(name);
    if (!versions || name === '') return undefined;
    return { kind: 'APIGroup', apiVersion: 'v1', ...this.group(name, [...versions.keys()]) };
  }

  /** `/api/v1` or `/apis/{g}/{v}`: APIResourceList, main resources before their subresources. */
  resourceList(tenant: string, group: string, version: string): Record<string, unknown> | undefined {
    const defs = this.byGroup(tenant).get(group)?.get(version);
    if (!defs) return undefined;
    const resources: Record<string, unknown>[] = [];
    for (const d of [...defs].sort((a, b) => a.resource.localeCompare(b.resource))) {
      const main: Record<string, unknown> = {
        name: d.resource,
        singularName: d.singular,
        namespaced: d.namespaced,
        kind: d.kind,
        verbs: d.verbs,
      };
      if (d.shortNames.length) main.shortNames = d.shortNames;
      if (d.categories.length) main.categories = d.categories;
      main.storageVersionHash = storageVersionHash(d.group, d.custom?.storageVersion ?? d.version, d.kind);
      resources.push(main);
      for (const s of d.subresources) {
        const sub: Record<string, unknown> = { name: `${d.resource}/${s.name}`, singularName: '', namespaced: d.namespaced, kind: s.kind, verbs: s.verbs };
        if (s.group !== d.group) sub.group = s.group;
        if (s.version !== d.version) sub.version = s.version;
        resources.push(sub);
      }
    }
    return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: groupVersion({ group, version }), resources };
  }

  /**
   * Aggregated discovery (`apidiscovery.k8s.io/v2`) for `/api` (core=true) or
   * `/apis`: APIGroupDiscoveryList. Each group's metadata carries its name
   * only: 1.34+ omit a zero creationTimestamp instead of writing `null`.
   */
  aggregated(tenant: string, core: boolean): Record<string, unknown> {
    const items = [...this.byGroup(tenant).entries()]
      .filter(([g]) => (core ? g === '' : g !== ''))
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([g, versions]) => ({
        metadata: { name: g },
        versions: [...versions.keys()].sort(VERSION_ORDER).map((v) => ({
          version: v,
          resources: versions.get(v)!.sort((a, b) => a.resource.localeCompare(b.resource)).map((d) => this.aggregatedResource(d)),
          freshness: 'Current',
        })),
      }));
    return { kind: 'APIGroupDiscoveryList', apiVersion: 'apidiscovery.k8s.io/v2', metadata: {}, items };
  }

  private aggregatedResource(d: ResourceDefinition): Record<string, unknown> {
    const r: Record<string, unknown> = {
      resource: d.resource,
      responseKind: { group: d.group, version: d.version, kind: d.kind },
      scope: d.namespaced ? 'Namespaced' : 'Cluster',
      singularResource: d.singular,
      verbs: d.verbs,
    };
    if (d.shortNames.length) r.shortNames = d.shortNames;
    if (d.categories.length) r.categories = d.categories;
    if (d.subresources.length) {
      r.subresources = d.subresources.map((s) => ({
        subresource: s.name,
        responseKind: { group: s.group, version: s.version, kind: s.kind },
        verbs: s.verbs,
      }));
    }
    return r;
  }
}
