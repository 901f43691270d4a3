import type { AdmissionAttributes, GroupVersionKind, GroupVersionResource } from '../admission-attributes.js';
import { type ParsedSelector, parseSelector } from '../webhook/compiled-webhook.js';
import { ruleMatches, type RuleTarget } from '../webhook/rule-matcher.js';
import {
  type NamespaceLabelMemo,
  namespaceSelectorMatches,
  objectSelectorMatches,
  type WebhookMatchDependencies,
} from '../webhook/webhook-matcher.js';
import type { MatchResources, NamedRuleWithOperations } from './policy-types.js';

/** MatchResources with its selectors parsed once. */
export interface CompiledMatchResources {
  namespaceSelector: ParsedSelector;
  objectSelector: ParsedSelector;
  resourceRules: NamedRuleWithOperations[];
  excludeResourceRules: NamedRuleWithOperations[];
  matchPolicy: 'Exact' | 'Equivalent';
}

/** The resource and kind a policy matched a request as (an equivalent version under matchPolicy Equivalent). */
export interface PolicyMatchTarget {
  resource: GroupVersionResource;
  kind: GroupVersionKind;
}

/** Parses a MatchResources once (selectors, defaults: matchPolicy Equivalent, empty selectors). Pure. */
export function compileMatchResources(m: MatchResources | null | undefined): CompiledMatchResources {
  return {
    namespaceSelector: parseSelector(m?.namespaceSelector ?? {}),
    objectSelector: parseSelector(m?.objectSelector ?? {}),
    resourceRules: m?.resourceRules ?? [],
    excludeResourceRules: m?.excludeResourceRules ?? [],
    matchPolicy: m?.matchPolicy === 'Exact' ? 'Exact' : 'Equivalent',
  };
}

function isNamespaceResource(attrs: AdmissionAttributes): boolean {
  return attrs.resource.group === '' && attrs.resource.resource === 'namespaces';
}

function target(attrs: AdmissionAttributes, resource: GroupVersionResource): RuleTarget {
  const namespace = isNamespaceResource(attrs) ? attrs.name : attrs.namespace;
  return { operation: attrs.operation, resource, subresource: attrs.subresource, namespace };
}

function nameMatches(rule: NamedRuleWithOperations, name: string): boolean {
  const names = rule.resourceNames ?? [];
  return names.length === 0 || names.includes(name);
}

/** upstream's matchesResourceRules: the first rule that matches, directly or through an equivalent version. */
function matchRules(
  rules: readonly NamedRuleWithOperations[],
  matchPolicy: 'Exact' | 'Equivalent',
  attrs: AdmissionAttributes,
  deps: WebhookMatchDependencies,
): PolicyMatchTarget | undefined {
  for (const rule of rules) {
    if (ruleMatches(rule, target(attrs, attrs.resource)) && nameMatches(rule, attrs.name)) return { resource: attrs.resource, kind: attrs.kind };
  }
  if (matchPolicy !== 'Equivalent' || !deps.equivalentResources) return undefined;
  const equivalents = deps.equivalentResources(attrs.tenant, attrs.resource, attrs.subresource);
  for (const rule of rules) {
    for (const eq of equivalents) {
      if (ruleMatches(rule, target(attrs, eq.resource)) && nameMatches(rule, attrs.name)) return { resource: eq.resource, kind: eq.kind };
    }
  }
  return undefined;
}

async function settle<T>(fn: () => T | Promise<T>): Promise<{ value?: T; error?: unknown }> {
  try {
    return { value: await fn() };
  } catch (error) {
    return { error };
  }
}

/**
 * Whether a request matches, as upstream's policy matching.Matcher:
 * namespace and object selectors, excludeResourceRules, then resourceRules
 * (none: every resource, as for bindings); selector errors count only when
 * the rules match. Returns the target, or undefined. Throws AdmissionError
 * for a missing namespace or an unparsable selector.
 */
export async function matchResources(
  m: CompiledMatchResources,
  attrs: AdmissionAttributes,
  deps: WebhookMatchDependencies,
  memo: NamespaceLabelMemo,
): Promise<PolicyMatchTarget | undefined> {
  const ns = await settle(() => namespaceSelectorMatches(m.namespaceSelector, attrs, deps, memo));
  if (ns.error === undefined && !ns.value) return undefined;
  const obj = await settle(() => objectSelectorMatches(m.objectSelector, attrs));
  if (obj.error === undefined && !obj.value) return undefined;
  if (matchRules(m.excludeResourceRules, m.matchPolicy, attrs, deps)) return undefined;
  const found = m.resourceRules.length === 0 ? { resource: attrs.resource, kind: attrs.kind } : matchRules(m.resourceRules, m.matchPolicy, attrs, deps);
  if (!found) return undefined;
  if (ns.error !== undefined) throw ns.error;
  if (obj.error !== undefined) throw obj.error;
  return found;
}
