import type { AdmissionAttributes, GroupVersionKind, GroupVersionResource } from '../admission-attributes.js';
import { AdmissionError } from '../admission-error.js';
import { type LabelSelector, matchesLabels } from '@plinth/apimachinery';
import { type InvocationTarget, buildAdmissionReview } from './admission-review.js';
import type { CompiledWebhook, ParsedSelector } from './compiled-webhook.js';
import { evaluateMatchConditions } from './match-conditions.js';
import { anyRuleMatches, type RuleTarget } from './rule-matcher.js';
import { matchConditionFailure } from './webhook-errors.js';

/** Another version through which the same objects are served (matchPolicy Equivalent). */
export interface EquivalentResource {
  resource: GroupVersionResource;
  kind: GroupVersionKind;
}

/** What matching needs from the server. */
export interface WebhookMatchDependencies {
  /** A namespace's labels, or undefined when the namespace does not exist. */
  namespaceLabels(tenant: string, namespace: string): Promise<Record<string, string> | undefined>;
  /** The other group/versions serving the same resource; none when absent. */
  equivalentResources?(tenant: string, resource: GroupVersionResource, subresource: string): EquivalentResource[];
}

/** Per-request memo of namespace label lookups, shared by the webhooks of one request. */
export type NamespaceLabelMemo = Map<string, Promise<Record<string, string> | undefined>>;

function isNamespaceResource(attrs: AdmissionAttributes): boolean {
  return attrs.resource.group === '' && attrs.resource.resource === 'namespaces';
}

function labelsOf(obj: Record<string, unknown> | null): Record<string, string> | undefined {
  const meta = obj?.metadata as { labels?: Record<string, string> } | undefined;
  return meta?.labels ?? undefined;
}

function ruleTarget(attrs: AdmissionAttributes, resource: GroupVersionResource): RuleTarget {
  const namespace = isNamespaceResource(attrs) ? attrs.name : attrs.namespace;
  return { operation: attrs.operation, resource, subresource: attrs.subresource, namespace };
}

/** The target the webhook is called with, or undefined when no rule matches (even through an equivalent version). */
function matchRules(hook: CompiledWebhook, attrs: AdmissionAttributes, deps: WebhookMatchDependencies): InvocationTarget | undefined {
  if (anyRuleMatches(hook.rules, ruleTarget(attrs, attrs.resource))) {
    return { resource: attrs.resource, kind: attrs.kind, subresource: attrs.subresource };
  }
  if (hook.matchPolicy !== 'Equivalent' || !deps.equivalentResources) return undefined;
  const equivalents = deps.equivalentResources(attrs.tenant, attrs.resource, attrs.subresource);
  // Earlier rules win, as upstream iterates rules outside equivalents.
  for (const rule of hook.rules) {
    for (const eq of equivalents) {
      if (anyRuleMatches([rule], ruleTarget(attrs, eq.resource))) return { resource: eq.resource, kind: eq.kind, subresource: attrs.subresource };
    }
  }
  return undefined;
}

function selectorOrThrow(parsed: ParsedSelector): { selector: LabelSelector; empty: boolean } {
  if ('error' in parsed) throw AdmissionError.internal(parsed.error);
  return parsed;
}

/**
 * Whether a request passes a namespaceSelector, as upstream's
 * namespace.Matcher: cluster-scoped objects other than namespaces always
 * pass; a namespace create/update is matched on its own new labels; others
 * on their namespace's stored labels (memoized per request). Throws
 * AdmissionError 404 for a missing namespace, 500 for an unparsable selector.
 */
export async function namespaceSelectorMatches(
  parsed: ParsedSelector,
  attrs: AdmissionAttributes,
  deps: WebhookMatchDependencies,
  memo: NamespaceLabelMemo,
): Promise<boolean> {
  // Cluster-scoped objects other than namespaces are never exempted.
  if (!isNamespaceResource(attrs) && !attrs.namespaced) return true;
  const { selector, empty } = selectorOrThrow(parsed);
  if (empty) return true;
  let labels: Record<string, string> | undefined;
  if (isNamespaceResource(attrs) && !attrs.subresource && (attrs.operation === 'CREATE' || attrs.operation === 'UPDATE')) {
    labels = labelsOf(attrs.object);
  } else {
    const name = isNamespaceResource(attrs) ? attrs.name : attrs.namespace;
    let lookup = memo.get(name);
    if (!lookup) {
      lookup = deps.namespaceLabels(attrs.tenant, name);
      memo.set(name, lookup);
    }
    const found = await lookup;
    if (found === undefined) throw AdmissionError.notFound('', 'namespaces', name);
    labels = found;
  }
  return matchesLabels(selector, labels);
}

/**
 * Whether the object or the old object carries labels matching an
 * objectSelector (an empty selector matches everything). Throws
 * AdmissionError 500 for an unparsable selector.
 */
export function objectSelectorMatches(parsed: ParsedSelector, attrs: AdmissionAttributes): boolean {
  const { selector, empty } = selectorOrThrow(parsed);
  if (empty) return true;
  // A missing object (oldObject on create, object on delete) never matches.
  return (attrs.object !== null && matchesLabels(selector, labelsOf(attrs.object) ?? {})) ||
    (attrs.oldObject !== null && matchesLabels(selector, labelsOf(attrs.oldObject) ?? {}));
}

/** The `request` variable of CEL expressions: the AdmissionRequest without uid, object and oldObject. Pure. */
export function celRequest(attrs: AdmissionAttributes, target: InvocationTarget): Record<string, unknown> {
  const review = buildAdmissionReview('v1', '', attrs, target, null, null);
  const { uid: _u, object: _o, oldObject: _old, ...request } = review.request as Record<string, unknown>;
  return { subResource: '', requestSubResource: '', name: '', namespace: '', ...request };
}

/**
 * Whether `hook` is called for this request, as upstream's ShouldCallHook:
 * rules (with equivalent versions under matchPolicy Equivalent), then
 * namespaceSelector, objectSelector and matchConditions. Returns the
 * invocation target, or undefined to skip. Throws AdmissionError for a
 * missing namespace (404), an unparsable selector (500) or, under
 * failurePolicy Fail, matchConditions that errored (403).
 */
export async function matchWebhook(
  hook: CompiledWebhook,
  attrs: AdmissionAttributes,
  deps: WebhookMatchDependencies,
  memo: NamespaceLabelMemo,
): Promise<InvocationTarget | undefined> {
  const target = matchRules(hook, attrs, deps);
  if (!target) return undefined;
  if (!(await namespaceSelectorMatches(hook.namespaceSelector, attrs, deps, memo))) return undefined;
  if (!objectSelectorMatches(hook.objectSelector, attrs)) return undefined;
  if (hook.conditions.length === 0) return target;
  const outcome = evaluateMatchConditions(hook.conditions, { object: attrs.object, oldObject: attrs.oldObject, request: celRequest(attrs, target) });
  if (outcome.matches) return target;
  if (outcome.errors.length > 0 && hook.failurePolicy === 'Fail') throw matchConditionFailure(attrs, outcome.errors);
  return undefined;
}
