/** A group/version/kind triple as OpenAPI extensions spell it. */
export interface GroupVersionKind {
  group: string;
  version: string;
  kind: string;
}

// Built-in API groups are named after the Go package that defines them, not
// after the group; everything else (CRDs) is named after group/version/kind.
const BUILTIN_GROUP_PACKAGES: Readonly<Record<string, string>> = {
  '': 'k8s.io/api/core',
  'admissionregistration.k8s.io': 'k8s.io/api/admissionregistration',
  apps: 'k8s.io/api/apps',
  'authentication.k8s.io': 'k8s.io/api/authentication',
  'authorization.k8s.io': 'k8s.io/api/authorization',
  autoscaling: 'k8s.io/api/autoscaling',
  batch: 'k8s.io/api/batch',
  'certificates.k8s.io': 'k8s.io/api/certificates',
  'coordination.k8s.io': 'k8s.io/api/coordination',
  'discovery.k8s.io': 'k8s.io/api/discovery',
  'events.k8s.io': 'k8s.io/api/events',
  'flowcontrol.apiserver.k8s.io': 'k8s.io/api/flowcontrol',
  'internal.apiserver.k8s.io': 'k8s.io/api/apiserverinternal',
  'networking.k8s.io': 'k8s.io/api/networking',
  'node.k8s.io': 'k8s.io/api/node',
  policy: 'k8s.io/api/policy',
  'rbac.authorization.k8s.io': 'k8s.io/api/rbac',
  'resource.k8s.io': 'k8s.io/api/resource',
  'scheduling.k8s.io': 'k8s.io/api/scheduling',
  'storage.k8s.io': 'k8s.io/api/storage',
  'storagemigration.k8s.io': 'k8s.io/api/storagemigration',
  'apiextensions.k8s.io': 'k8s.io/apiextensions-apiserver/pkg/apis/apiextensions',
  'apiregistration.k8s.io': 'k8s.io/kube-aggregator/pkg/apis/apiregistration',
};

/**
 * Upstream's ToRESTFriendlyName: reverses the DNS labels of the first path
 * segment and joins all segments with dots
 * (`k8s.io/api/core/v1.Pod` → `io.k8s.api.core.v1.Pod`,
 * `stable.example.com/v1/CronTab` → `com.example.stable.v1.CronTab`).
 * A first segment without a dot is kept as is.
 */
export function toRestFriendlyName(name: string): string {
  const parts = name.split('/');
  if (parts[0].includes('.')) parts[0] = parts[0].split('.').reverse().join('.');
  return parts.join('.');
}

/** True when `group` is one of Kubernetes' own API groups (named after Go packages). */
export function isBuiltinGroup(group: string): boolean {
  return Object.prototype.hasOwnProperty.call(BUILTIN_GROUP_PACKAGES, group);
}

/**
 * The OpenAPI definition name of a kind: `io.k8s.api.core.v1.ConfigMap` for
 * built-in groups, `com.example.stable.v1.CronTab` for any other group.
 */
export function definitionNameFor(gvk: GroupVersionKind): string {
  const pkg = BUILTIN_GROUP_PACKAGES[gvk.group];
  if (pkg !== undefined) return toRestFriendlyName(`${pkg}/${gvk.version}.${gvk.kind}`);
  return toRestFriendlyName(`${gvk.group}/${gvk.version}/${gvk.kind}`);
}

/**
 * Upstream's ToValidOperationID: drops every character that is not a letter,
 * `_` or (past the first position) a digit, upper-casing the letter after each
 * dropped run; `capitalizeFirst` upper-cases the first kept letter too.
 */
export function toValidOperationId(s: string, capitalizeFirst: boolean): string {
  let out = '';
  let capitalize = capitalizeFirst;
  let index = 0;
  for (const ch of s) {
    const keep = /\p{L}/u.test(ch) || ch === '_' || (index !== 0 && /\p{Nd}/u.test(ch));
    if (keep) {
      out += capitalize ? ch.toUpperCase() : ch;
      capitalize = false;
    } else {
      capitalize = true;
    }
    index += ch.length;
  }
  return out;
}

function trimmedGroup(group: string): string {
  const name = group === '' ? 'core' : group;
  return name.endsWith('.k8s.io') ? name.slice(0, -'.k8s.io'.length) : name;
}

/** The group/version part of operation IDs: `CoreV1`, `AppsV1`, `StableExampleComV1`. */
export function operationIdGroupVersion(group: string, version: string): string {
  return toValidOperationId(trimmedGroup(group), true) + toValidOperationId(version, true);
}

/** The operation tag upstream uses: `core_v1`, `rbacAuthorization_v1`, `stableExampleCom_v1`. */
export function operationTag(group: string, version: string): string {
  return `${toValidOperationId(trimmedGroup(group), false)}_${toValidOperationId(version, false)}`;
}

/** The URL prefix serving a group/version: `/api/v1` for core, `/apis/<group>/<version>` otherwise. */
export function groupVersionUrlPrefix(group: string, version: string): string {
  return group === '' ? `/api/${version}` : `/apis/${group}/${version}`;
}

/**
 * Parses `v1` or `apps/v1` into group and version. A string without a slash
 * is a core version.
 */
export function parseGroupVersion(gv: string): { group: string; version: string } {
  const slash = gv.lastIndexOf('/');
  return slash < 0 ? { group: '', version: gv } : { group: gv.slice(0, slash), version: gv.slice(slash + 1) };
}

/** The OpenAPI v3 path key of a group/version: `api/v1` or `apis/<group>/<version>`. */
export function openApiV3PathKey(gv: string): string {
  const { group, version } = parseGroupVersion(gv);
  return groupVersionUrlPrefix(group, version).slice(1);
}
