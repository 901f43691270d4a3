import type { AuthorizationAttributes } from '@plinth/apimachinery';

/** rbac/v1 PolicyRule, normalised: every list present (possibly empty). */
export interface PolicyRule {
  verbs: string[];
  apiGroups: string[];
  resources: string[];
  resourceNames: string[];
  nonResourceURLs: string[];
}

/** The `*` of verbs, groups, resources and non-resource URLs. */
export const ALL = '*';

function stringList(v: unknown): string[] {
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
}

/** Reads a stored or sent rule into a {@link PolicyRule}; non-string entries are dropped. Does not mutate `raw`. */
export function toPolicyRule(raw: unknown): PolicyRule {
  const r = (raw && typeof raw === 'object' ? raw : {}) as Record<string, unknown>;
  return {
    verbs: stringList(r.verbs),
    apiGroups: stringList(r.apiGroups),
    resources: stringList(r.resources),
    resourceNames: stringList(r.resourceNames),
    nonResourceURLs: stringList(r.nonResourceURLs),
  };
}

/** A rule list as stored in a Role or ClusterRole (`rules`); [] when absent or not a list. */
export function rulesOf(obj: Record<string, unknown>): PolicyRule[] {
  return Array.isArray(obj.rules) ? obj.rules.map(toPolicyRule) : [];
}

function verbMatches(rule: PolicyRule, verb: string): boolean {
  return rule.verbs.some((v) => v === ALL || v === verb);
}

function apiGroupMatches(rule: PolicyRule, group: string): boolean {
  return rule.apiGroups.some((g) => g === ALL || g === group);
}

/** Upstream's ResourceMatches: `*`, the exact `resource[/subresource]`, or `*\/subresource`. */
function resourceMatches(rule: PolicyRule, combined: string, subresource: string): boolean {
  for (const r of rule.resources) {
    if (r === ALL || r === combined) return true;
    if (subresource && r.length === subresource.length + 2 && r.startsWith('*/') && r.endsWith(subresource)) return true;
  }
  return false;
}

function resourceNameMatches(rule: PolicyRule, name: string): boolean {
  return rule.resourceNames.length === 0 || rule.resourceNames.includes(name);
}

/** A rule URL with trailing `*`s matches every path starting with what precedes them. */
function nonResourceURLMatches(rule: PolicyRule, path: string): boolean {
  for (const u of rule.nonResourceURLs) {
    if (u === ALL || u === path) return true;
    if (u.endsWith('*') && path.startsWith(u.replace(/\*+$/, ''))) return true;
  }
  return false;
}

/** Upstream's RuleAllows: whether `rule` grants the request `attrs`. Pure. */
export function ruleAllows(attrs: AuthorizationAttributes, rule: PolicyRule): boolean {
  if (!verbMatches(rule, attrs.verb)) return false;
  if (!attrs.resourceRequest) return nonResourceURLMatches(rule, attrs.path);
  const combined = attrs.subresource ? `${attrs.resource}/${attrs.subresource}` : attrs.resource;
  return apiGroupMatches(rule, attrs.apiGroup) && resourceMatches(rule, combined, attrs.subresource) && resourceNameMatches(rule, attrs.name);
}

/**
 * Upstream's CompactString, used in escalation messages:
 * `{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}` (Go's %q of each list).
 */
export function compactString(r: PolicyRule): string {
  const parts: string[] = [];
  const q = (xs: string[]) => `[${xs.map((x) => JSON.stringify(x)).join(' ')}]`;
  if (r.apiGroups.length > 0) parts.push(`APIGroups:${q(r.apiGroups)}`);
  if (r.resources.length > 0) parts.push(`Resources:${q(r.resources)}`);
  if (r.nonResourceURLs.length > 0) parts.push(`NonResourceURLs:${q(r.nonResourceURLs)}`);
  if (r.resourceNames.length > 0) parts.push(`ResourceNames:${q(r.resourceNames)}`);
  if (r.verbs.length > 0) parts.push(`Verbs:${q(r.verbs)}`);
  return `{${parts.join(', ')}}`;
}
