import type { AdmissionOperation, GroupVersionResource } from '../admission-attributes.js';
import type { RuleWithOperationsV1 } from './webhook-configuration.js';

/** What a rule is matched against: the (possibly equivalent) resource of a request. */
export interface RuleTarget {
  operation: AdmissionOperation;
  resource: GroupVersionResource;
  subresource: string;
  /** The request's namespace ('' for cluster-scoped objects; the namespace's own name for namespace objects). */
  namespace: string;
}

function exactOrWildcard(items: readonly string[] | null | undefined, requested: string): boolean {
  return (items ?? []).some((i) => i === '*' || i === requested);
}

function isNamespaceResource(r: GroupVersionResource): boolean {
  return r.group === '' && r.version === 'v1' && r.resource === 'namespaces';
}

function scopeMatches(rule: RuleWithOperationsV1, t: RuleTarget): boolean {
  const scope = rule.scope ?? '*';
  if (scope === '*') return true;
  // Namespace objects are cluster-scoped even though their requests carry a namespace.
  if (scope === 'Namespaced') return !isNamespaceResource(t.resource) && t.namespace !== '';
  if (scope === 'Cluster') return isNamespaceResource(t.resource) || t.namespace === '';
  return false;
}

function resourceMatches(rule: RuleWithOperationsV1, t: RuleTarget): boolean {
  for (const entry of rule.resources ?? []) {
    const slash = entry.indexOf('/');
    const res = slash < 0 ? entry : entry.slice(0, slash);
    const sub = slash < 0 ? '' : entry.slice(slash + 1);
    // A bare `*` means every resource but no subresource; `x/*` every subresource of x.
    if ((res === '*' || res === t.resource.resource) && (sub === '*' || sub === t.subresource)) return true;
  }
  return false;
}

/**
 * Whether one rule matches, as upstream's rules.Matcher: scope, operation
 * (`*` for all), API group (`""` is core), version and resource/subresource
 * (`*` for all resources, `x/*` for all of x's subresources, `*` slash `*`
 * for everything, `*` slash `status` for every status) must all match. Pure.
 */
export function ruleMatches(rule: RuleWithOperationsV1, t: RuleTarget): boolean {
  return (
    scopeMatches(rule, t) &&
    exactOrWildcard(rule.operations, t.operation) &&
    exactOrWildcard(rule.apiGroups, t.resource.group) &&
    exactOrWildcard(rule.apiVersions, t.resource.version) &&
    resourceMatches(rule, t)
  );
}

/** Whether any of `rules` matches (no rules: never). */
export function anyRuleMatches(rules: readonly RuleWithOperationsV1[], t: RuleTarget): boolean {
  return rules.some((r) => ruleMatches(r, t));
}
