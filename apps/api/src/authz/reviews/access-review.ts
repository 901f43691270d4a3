import type { UserInfo } from '@plinth/admission';
import { type FieldError, fieldErrors } from '@plinth/apimachinery';
import { isPlainObject } from '@plinth/apimachinery';
import type { AuthorizationAttributes, AuthorizationDecision, SelectorRequirementAttributes } from '@plinth/apimachinery';
import { fieldSelectorAttributes, labelSelectorAttributes } from '@plinth/apimachinery';
import type { PolicyRule } from '../../kinds/rbac/policy-rule.js';

type Json = Record<string, unknown>;

const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);

/** The spec of an access review; `resourceAttributes`/`nonResourceAttributes` undefined when absent or null. */
export function reviewSpec(review: Json): { spec: Json; resource?: Json; nonResource?: Json } {
  const spec = isPlainObject(review.spec) ? review.spec : {};
  return {
    spec,
    resource: isPlainObject(spec.resourceAttributes) ? spec.resourceAttributes : undefined,
    nonResource: isPlainObject(spec.nonResourceAttributes) ? spec.nonResourceAttributes : undefined,
  };
}

/** Whether `metadata` is empty as Go's zero ObjectMeta is (a null creationTimestamp counts as empty), ignoring `allowed` keys. */
function metadataEmpty(review: Json, allowed: string[]): boolean {
  const meta = isPlainObject(review.metadata) ? review.metadata : {};
  return Object.entries(meta).every(([k, v]) => allowed.includes(k) || v === null || v === '' || (Array.isArray(v) && v.length === 0) || (isPlainObject(v) && Object.keys(v).length === 0));
}

/**
 * Upstream's validation of the access review kinds: exactly one of
 * resourceAttributes and nonResourceAttributes; SubjectAccessReviews need a
 * user or a group; LocalSubjectAccessReviews allow no non-resource
 * attributes; metadata must be empty (but for a local review's namespace). Pure.
 */
export function validateAccessReview(kind: 'SubjectAccessReview' | 'LocalSubjectAccessReview' | 'SelfSubjectAccessReview', review: Json): FieldError[] {
  const { spec, resource, nonResource } = reviewSpec(review);
  const errs: FieldError[] = [];
  if (resource && nonResource) errs.push(fieldErrors.invalid('spec.nonResourceAttributes', nonResource, 'cannot be specified in combination with resourceAttributes'));
  if (!resource && !nonResource) errs.push(fieldErrors.invalid('spec.resourceAttributes', null, 'exactly one of nonResourceAttributes or resourceAttributes must be specified'));
  if (kind === 'LocalSubjectAccessReview' && nonResource) errs.push(fieldErrors.invalid('spec.nonResourceAttributes', nonResource, 'disallowed on this kind of request'));
  if (kind !== 'SelfSubjectAccessReview' && str(spec.user) === '' && strings(spec.groups).length === 0) {
    errs.push(fieldErrors.invalid('spec.user', str(spec.user), 'at least one of user or group must be specified'));
  }
  if (resource) errs.push(...validateSelector(resource.fieldSelector, 'spec.resourceAttributes.fieldSelector'), ...validateSelector(resource.labelSelector, 'spec.resourceAttributes.labelSelector'));
  const local = kind === 'LocalSubjectAccessReview';
  if (!metadataEmpty(review, local ? ['namespace', 'managedFields'] : [])) {
    errs.push(fieldErrors.invalid('metadata', review.metadata, local ? 'must be empty except for namespace' : 'must be empty'));
  }
  return errs;
}

const SELECTOR_OPERATORS = ['In', 'NotIn', 'Exists', 'DoesNotExist'];

/** KEP-4601's selector attributes of a review: rawSelector or requirements, not both; requirements with a key and an operator of the API (values only for In/NotIn). */
function validateSelector(sel: unknown, at: string): FieldError[] {
  if (sel === undefined || sel === null) return [];
  if (!isPlainObject(sel)) return [fieldErrors.invalid(at, sel, 'must be an object')];
  const errs: FieldError[] = [];
  const reqs = Array.isArray(sel.requirements) ? sel.requirements : [];
  if (str(sel.rawSelector) && reqs.length > 0) errs.push(fieldErrors.invalid(at, sel, 'rawSelector and requirements may not both be specified'));
  reqs.forEach((r, i) => {
    const req = isPlainObject(r) ? r : {};
    if (!str(req.key)) errs.push(fieldErrors.required(`${at}.requirements[${i}].key`));
    if (!SELECTOR_OPERATORS.includes(str(req.operator))) errs.push(fieldErrors.notSupported(`${at}.requirements[${i}].operator`, req.operator, SELECTOR_OPERATORS));
    const values = strings(req.values);
    if ((req.operator === 'In' || req.operator === 'NotIn') && values.length === 0) errs.push(fieldErrors.required(`${at}.requirements[${i}].values`, 'must be specified when `operator` is \'In\' or \'NotIn\''));
    if ((req.operator === 'Exists' || req.operator === 'DoesNotExist') && values.length > 0) errs.push(fieldErrors.forbidden(`${at}.requirements[${i}].values`, 'may not be specified when `operator` is \'Exists\' or \'DoesNotExist\''));
  });
  return errs;
}

/** A review's selector as the authorizer takes it: its requirements, or its rawSelector parsed (one that does not parse is left out: selectors only narrow). */
function selectorOf(sel: unknown, parse: (raw: string) => SelectorRequirementAttributes[] | undefined): SelectorRequirementAttributes[] | undefined {
  if (!isPlainObject(sel)) return undefined;
  if (str(sel.rawSelector)) return parse(str(sel.rawSelector));
  const reqs = (Array.isArray(sel.requirements) ? sel.requirements : []).filter(isPlainObject).map((r): SelectorRequirementAttributes => {
    const values = strings(r.values);
    return { key: str(r.key), operator: str(r.operator) as SelectorRequirementAttributes['operator'], ...(values.length > 0 ? { values } : {}) };
  });
  return reqs.length > 0 ? reqs : undefined;
}

/** The user a SubjectAccessReview asks about (spec.user, groups, uid, extra). */
export function reviewedUser(spec: Json): UserInfo {
  const user: UserInfo = { username: str(spec.user), groups: strings(spec.groups) };
  if (str(spec.uid)) user.uid = str(spec.uid);
  if (isPlainObject(spec.extra)) {
    const extra: Record<string, string[]> = {};
    for (const [k, v] of Object.entries(spec.extra)) extra[k] = strings(v);
    user.extra = extra;
  }
  return user;
}

/**
 * Upstream's ResourceAttributesFrom / NonResourceAttributesFrom: the
 * authorization attributes a review asks about (an empty version means all).
 */
export function reviewAttributes(user: UserInfo, tenant: string, resource: Json | undefined, nonResource: Json | undefined): AuthorizationAttributes {
  if (resource) {
    return {
      user,
      tenant,
      verb: str(resource.verb),
      resourceRequest: true,
      apiGroup: str(resource.group),
      apiVersion: str(resource.version) || '*',
      resource: str(resource.resource),
      subresource: str(resource.subresource),
      namespace: str(resource.namespace),
      name: str(resource.name),
      path: '',
      ...selectorsOf(resource),
    };
  }
  const n = nonResource ?? {};
  return { user, tenant, verb: str(n.verb), resourceRequest: false, apiGroup: '', apiVersion: '', resource: '', subresource: '', namespace: '', name: '', path: str(n.path) };
}

function selectorsOf(resource: Json): Pick<AuthorizationAttributes, 'fieldSelector' | 'labelSelector'> {
  const fieldSelector = selectorOf(resource.fieldSelector, fieldSelectorAttributes);
  const labelSelector = selectorOf(resource.labelSelector, labelSelectorAttributes);
  return { ...(fieldSelector ? { fieldSelector } : {}), ...(labelSelector ? { labelSelector } : {}) };
}

/** A SubjectAccessReviewStatus for `decision`, as upstream's: allowed always; denied (an explicit deny), reason and evaluationError only when set. */
export function reviewStatus(decision: AuthorizationDecision): Json {
  const status: Json = { allowed: decision.allowed };
  if (!decision.allowed && !decision.noOpinion) status.denied = true;
  if (decision.reason) status.reason = decision.reason;
  if (decision.error) status.evaluationError = decision.error;
  return status;
}

/**
 * A SubjectRulesReviewStatus for the rules RBAC resolved, as upstream's
 * RBAC RulesFor splits them: a rule with resources becomes a resource
 * rule, one with non-resource URLs a non-resource rule.
 */
export function rulesReviewStatus(rules: PolicyRule[], errors: string[]): Json {
  const resourceRules: Json[] = [];
  const nonResourceRules: Json[] = [];
  for (const r of rules) {
    if (r.resources.length > 0) {
      const rule: Json = { verbs: r.verbs };
      if (r.apiGroups.length > 0) rule.apiGroups = r.apiGroups;
      rule.resources = r.resources;
      if (r.resourceNames.length > 0) rule.resourceNames = r.resourceNames;
      resourceRules.push(rule);
    }
    if (r.nonResourceURLs.length > 0) nonResourceRules.push({ verbs: r.verbs, nonResourceURLs: r.nonResourceURLs });
  }
  const status: Json = { resourceRules, nonResourceRules, incomplete: false };
  if (errors.length > 0) status.evaluationError = errors.length === 1 ? errors[0] : `[${errors.join(', ')}]`;
  return status;
}
