import type { Api } from './api.js';

/** A served resource, as discovery lists it. */
export interface ServedResource {
  /** `v1` or `group/version`. */
  gv: string;
  group: string;
  name: string;
  kind: string;
  namespaced: boolean;
  verbs: string[];
  /** What kubectl also accepts (`cm`, `ns`, …), as discovery lists them. */
  shortNames?: string[];
}

interface ApiResourceList {
  groupVersion: string;
  resources: { name: string; kind: string; namespaced: boolean; verbs: string[]; shortNames?: string[] }[];
}

const cache = new Map<string, Promise<ServedResource[]>>();

/**
 * Every listable resource the tenant serves (built-in kinds and its CRDs):
 * the core group, then each group's preferred version, from discovery.
 * Cached per token and tenant for the page's life.
 */
export function servedResources(api: Api): Promise<ServedResource[]> {
  const key = `${api.session.tenant}\n${api.session.token}`;
  let p = cache.get(key);
  if (!p) {
    p = load(api);
    p.catch(() => cache.delete(key));
    cache.set(key, p);
  }
  return p;
}

async function load(api: Api): Promise<ServedResource[]> {
  const groups = await api.json<{ groups: { name: string; preferredVersion: { groupVersion: string } }[] }>(api.t('/apis'));
  const gvs = ['v1', ...groups.groups.map((g) => g.preferredVersion.groupVersion)];
  const lists = await Promise.all(gvs.map((gv) => api.json<ApiResourceList>(api.t(gv === 'v1' ? '/api/v1' : `/apis/${gv}`)).catch(() => null)));
  const out: ServedResource[] = [];
  for (const list of lists) {
    if (!list) continue;
    const group = list.groupVersion.includes('/') ? list.groupVersion.split('/')[0]! : '';
    for (const r of list.resources) {
      if (r.name.includes('/') || !r.verbs.includes('list')) continue;
      out.push({ gv: list.groupVersion, group, name: r.name, kind: r.kind, namespaced: r.namespaced, verbs: r.verbs, shortNames: r.shortNames ?? [] });
    }
  }
  return out;
}

/**
 * One path segment from text the console did not choose (the URL hash, a
 * form): percent-encoded, and never empty, `.` or `..` (which the browser
 * would resolve, even encoded, to another path). Throws otherwise.
 */
export function pathSegment(text: string): string {
  if (text === '' || text === '.' || text === '..') throw new Error(`not a valid name: ${JSON.stringify(text)}`);
  return encodeURIComponent(text);
}

/**
 * The URL path of `resource` in `gv` (namespace `ns` and object `name`
 * when given), under the session's tenant, each segment encoded by
 * {@link pathSegment}. Callers pass only a `gv` and `resource` that
 * discovery returned ({@link servedResource}); throws for a bad segment.
 */
export function resourcePath(api: Api, gv: string, resource: string, ns?: string, name?: string): string {
  const base = gv === 'v1' ? '/api/v1' : `/apis/${gv.split('/').map(pathSegment).join('/')}`;
  const nsPart = ns ? `/namespaces/${pathSegment(ns)}` : '';
  return api.t(`${base}${nsPart}/${pathSegment(resource)}${name !== undefined ? `/${pathSegment(name)}` : ''}`);
}

/** The served resource `resource` of `gv` as discovery returned it; undefined when the tenant serves no such listable resource (a crafted link). */
export async function servedResource(api: Api, gv: string, resource: string): Promise<ServedResource | undefined> {
  return (await servedResources(api)).find((r) => r.gv === gv && r.name === resource);
}
