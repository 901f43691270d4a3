import { isDeepStrictEqual } from 'node:util';
import { type FieldError, fieldErrors } from '@plinth/apimachinery';
import { isPlainObject, type KubeObject } from '@plinth/apimachinery';
import { isDNS1123Subdomain, isValidPathSegmentName } from '@plinth/apimachinery';
import { validateLabelSelector } from '../admissionregistration/webhook-configuration.validation.js';

/** The RBAC API group, the only roleRef.apiGroup upstream accepts. */
export const RBAC_API_GROUP = 'rbac.authorization.k8s.io';

type Json = Record<string, unknown>;

const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/** Upstream's ValidatePolicyRule; `namespaced` rules (of a Role) may not name non-resource URLs. */
function validatePolicyRule(raw: unknown, namespaced: boolean, field: string): FieldError[] {
  const rule = isPlainObject(raw) ? raw : {};
  const errs: FieldError[] = [];
  if (list(rule.verbs).length === 0) errs.push(fieldErrors.required(`${field}.verbs`, 'verbs must contain at least one value'));
  const urls = list(rule.nonResourceURLs);
  if (urls.length > 0) {
    if (namespaced) errs.push(fieldErrors.invalid(`${field}.nonResourceURLs`, urls, 'namespaced rules cannot apply to non-resource URLs'));
    if (list(rule.apiGroups).length > 0 || list(rule.resources).length > 0 || list(rule.resourceNames).length > 0) {
      errs.push(fieldErrors.invalid(`${field}.nonResourceURLs`, urls, 'rules cannot apply to both regular resources and non-resource URLs'));
    }
    return errs;
  }
  if (list(rule.apiGroups).length === 0) errs.push(fieldErrors.required(`${field}.apiGroups`, 'resource rules must supply at least one api group'));
  if (list(rule.resources).length === 0) errs.push(fieldErrors.required(`${field}.resources`, 'resource rules must supply at least one resource'));
  return errs;
}

function validateRules(obj: Json, namespaced: boolean): FieldError[] {
  return list(obj.rules).flatMap((r, i) => validatePolicyRule(r, namespaced, `rules[${i}]`));
}

/** Upstream's ValidateRole (metadata is validated by the store). */
export function validateRole(obj: KubeObject): FieldError[] {
  return validateRules(obj, true);
}

/** Upstream's ValidateClusterRole: rules, and a non-empty list of valid selectors when aggregationRule is set. */
export function validateClusterRole(obj: KubeObject, allowInvalidLabelValues = false): FieldError[] {
  const errs = validateRules(obj, false);
  if (obj.aggregationRule !== undefined && obj.aggregationRule !== null) {
    const agg = isPlainObject(obj.aggregationRule) ? obj.aggregationRule : {};
    const selectors = list(agg.clusterRoleSelectors);
    if (selectors.length === 0) {
      errs.push(fieldErrors.required('aggregationRule.clusterRoleSelectors', 'at least one clusterRoleSelector required if aggregationRule is non-nil'));
    }
    selectors.forEach((s, i) => errs.push(...validateLabelSelector(s, `aggregationRule.clusterRoleSelectors[${i}]`, allowInvalidLabelValues)));
  }
  return errs;
}

/** Upstream's ValidateClusterRole on update: selector label values already invalid in the old object stay allowed. */
export function validateClusterRoleUpdate(obj: KubeObject, old: KubeObject): FieldError[] {
  const oldInvalid = validateClusterRole(old).some((e) => e.field.includes('matchLabels') || e.field.includes('matchExpressions'));
  return validateClusterRole(obj, oldInvalid);
}

/** ValidateServiceAccountName: a DNS-1123 subdomain. */
function serviceAccountNameErrors(name: string): string[] {
  return isDNS1123Subdomain(name);
}

/** Upstream's ValidateRoleBindingSubject; subjects of cluster bindings must name a ServiceAccount's namespace. */
function validateSubject(raw: unknown, namespaced: boolean, field: string): FieldError[] {
  const s = isPlainObject(raw) ? raw : {};
  const errs: FieldError[] = [];
  const name = str(s.name);
  const apiGroup = str(s.apiGroup);
  if (name.length === 0) errs.push(fieldErrors.required(`${field}.name`));
  switch (s.kind) {
    case 'ServiceAccount':
      if (name.length > 0) for (const m of serviceAccountNameErrors(name)) errs.push(fieldErrors.invalid(`${field}.name`, name, m));
      if (apiGroup.length > 0) errs.push(fieldErrors.notSupported(`${field}.apiGroup`, apiGroup, ['']));
      if (!namespaced && str(s.namespace).length === 0) errs.push(fieldErrors.required(`${field}.namespace`));
      break;
    case 'User':
    case 'Group':
      if (apiGroup !== RBAC_API_GROUP) errs.push(fieldErrors.notSupported(`${field}.apiGroup`, apiGroup, [RBAC_API_GROUP]));
      break;
    default:
      errs.push(fieldErrors.notSupported(`${field}.kind`, str(s.kind), ['ServiceAccount', 'User', 'Group']));
  }
  return errs;
}

function roleRefOf(obj: Json): Json {
  return isPlainObject(obj.roleRef) ? obj.roleRef : {};
}

/** Upstream's ValidateRoleBinding / ValidateClusterRoleBinding (`namespaced` for RoleBinding). */
export function validateBinding(obj: KubeObject, namespaced: boolean): FieldError[] {
  const errs: FieldError[] = [];
  const ref = roleRefOf(obj);
  const apiGroup = str(ref.apiGroup);
  if (apiGroup !== RBAC_API_GROUP) errs.push(fieldErrors.notSupported('roleRef.apiGroup', apiGroup, [RBAC_API_GROUP]));
  const kinds = namespaced ? ['Role', 'ClusterRole'] : ['ClusterRole'];
  if (!kinds.includes(str(ref.kind))) errs.push(fieldErrors.notSupported('roleRef.kind', str(ref.kind), kinds));
  const name = str(ref.name);
  if (name.length === 0) errs.push(fieldErrors.required('roleRef.name'));
  else for (const m of isValidPathSegmentName(name)) errs.push(fieldErrors.invalid('roleRef.name', name, m));
  list(obj.subjects).forEach((s, i) => errs.push(...validateSubject(s, namespaced, `subjects[${i}]`)));
  return errs;
}

/** Upstream's binding update validation: everything of create, and roleRef may not change. */
export function validateBindingUpdate(obj: KubeObject, old: KubeObject, namespaced: boolean): FieldError[] {
  const errs = validateBinding(obj, namespaced);
  const ref = roleRefOf(obj);
  const oldRef = roleRefOf(old);
  const same = ['apiGroup', 'kind', 'name'].every((k) => str(ref[k]) === str(oldRef[k]));
  if (!same) {
    // Go prints the struct with %v-style fields in the Invalid value; upstream's text is "cannot change roleRef".
    errs.push(fieldErrors.invalid('roleRef', { apiGroup: str(ref.apiGroup), kind: str(ref.kind), name: str(ref.name) }, 'cannot change roleRef'));
  }
  return errs;
}

/** Whether two objects differ only in the fields the garbage collector changes (ownerReferences, finalizers) and system metadata. */
export function onlyGarbageCollectionFieldsDiffer(obj: Json, old: Json): boolean {
  const strip = (o: Json) => {
    const meta = isPlainObject(o.metadata) ? { ...o.metadata } : {};
    for (const k of ['ownerReferences', 'finalizers', 'resourceVersion', 'managedFields', 'generation', 'creationTimestamp', 'uid']) delete meta[k];
    return { ...o, metadata: meta };
  };
  return isDeepStrictEqual(strip(obj), strip(old));
}
