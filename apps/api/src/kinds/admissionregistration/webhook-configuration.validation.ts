import { isDeepStrictEqual } from 'node:util';
import { checkMatchConditionExpression, validateWebhookClientConfig, type WebhookKind } from '@plinth/admission';
import { type FieldError, fieldErrors } from '@plinth/apimachinery';
import { isPlainObject, type KubeObject } from '@plinth/apimachinery';
import { isDNS1035Label, isDNS1123Subdomain, isQualifiedName, isValidLabelValue } from '@plinth/apimachinery';

/**
 * Validation of Mutating- and ValidatingWebhookConfiguration, as upstream's
 * pkg/apis/admissionregistration/validation (metadata is validated by the
 * store). Upstream relaxes some checks on update when the stored object
 * already violated them; the options below carry that.
 */
interface Options {
  ignoreMatchConditions: boolean;
  requireNoSideEffects: boolean;
  requireRecognizedAdmissionReviewVersion: boolean;
  requireUniqueWebhookNames: boolean;
  allowInvalidLabelValueInSelector: boolean;
}

const ACCEPTED_REVIEW_VERSIONS = ['v1', 'v1beta1'];
const FAILURE_POLICIES = ['Fail', 'Ignore'];
const MATCH_POLICIES = ['Equivalent', 'Exact'];
const ALL_SIDE_EFFECTS = ['None', 'NoneOnDryRun', 'Some', 'Unknown'];
const NO_SIDE_EFFECTS = ['None', 'NoneOnDryRun'];
const OPERATIONS = ['*', 'CONNECT', 'CREATE', 'DELETE', 'UPDATE'];
const REINVOCATION_POLICIES = ['IfNeeded', 'Never'];
const SCOPES = ['*', 'Cluster', 'Namespaced'];
const MAX_MATCH_CONDITIONS = 64;

type Json = Record<string, unknown>;

function strings(v: unknown): string[] {
  return Array.isArray(v) ? v.map((x) => (typeof x === 'string' ? x : String(x))) : [];
}

function webhooksOf(obj: KubeObject | Json): Json[] {
  return Array.isArray(obj.webhooks) ? obj.webhooks.map((w) => (isPlainObject(w) ? w : {})) : [];
}

/** utilvalidation.IsFullyQualifiedName: a DNS subdomain of at least three segments. */
function validateFullyQualifiedName(field: string, value: unknown): FieldError[] {
  let name = typeof value === 'string' ? value : '';
  if (name.length === 0) return [fieldErrors.required(field)];
  if (name.endsWith('.')) name = name.slice(0, -1);
  const errs = isDNS1123Subdomain(name);
  if (errs.length > 0) return [fieldErrors.invalid(field, name, errs.join(','))];
  if (name.split('.').length < 3) return [fieldErrors.invalid(field, name, 'should be a domain with at least three segments separated by dots')];
  return [];
}

function validateResources(resources: string[], field: string): FieldError[] {
  const errs: FieldError[] = [];
  if (resources.length === 0) errs.push(fieldErrors.required(field));
  const withWildcardSub = new Set<string>();
  const subWithWildcardRes = new Set<string>();
  let doubleWildcard = false;
  let singleWildcard = false;
  let plainResource = false;
  resources.forEach((resSub, i) => {
    if (resSub === '') {
      errs.push(fieldErrors.required(`${field}[${i}]`));
      return;
    }
    if (resSub === '*/*') doubleWildcard = true;
    if (resSub === '*') singleWildcard = true;
    const slash = resSub.indexOf('/');
    if (slash < 0) {
      plainResource = resSub !== '*';
      return;
    }
    const res = resSub.slice(0, slash);
    const sub = resSub.slice(slash + 1);
    if (withWildcardSub.has(res)) errs.push(fieldErrors.invalid(`${field}[${i}]`, resSub, `if '${res}/*' is present, must not specify ${resSub}`));
    if (subWithWildcardRes.has(sub)) errs.push(fieldErrors.invalid(`${field}[${i}]`, resSub, `if '*/${sub}' is present, must not specify ${resSub}`));
    if (sub === '*') withWildcardSub.add(res);
    if (res === '*') subWithWildcardRes.add(sub);
  });
  if (resources.length > 1 && doubleWildcard) errs.push(fieldErrors.invalid(field, resources, "if '*/*' is present, must not specify other resources"));
  if (singleWildcard && plainResource) errs.push(fieldErrors.invalid(field, resources, "if '*' is present, must not specify other resources without subresources"));
  return errs;
}

/** One RuleWithOperations, as upstream's validateRule (resources must not overlap). */
export function validateRule(rule: Json, field: string): FieldError[] {
  const errs: FieldError[] = [];
  const ops = strings(rule.operations);
  if (ops.length === 0) errs.push(fieldErrors.required(`${field}.operations`));
  if (ops.length > 1 && ops.includes('*')) errs.push(fieldErrors.invalid(`${field}.operations`, ops, "if '*' is present, must not specify other operations"));
  ops.forEach((op, i) => {
    if (!OPERATIONS.includes(op)) errs.push(fieldErrors.notSupported(`${field}.operations[${i}]`, op, OPERATIONS));
  });
  const groups = strings(rule.apiGroups);
  if (groups.length === 0) errs.push(fieldErrors.required(`${field}.apiGroups`));
  if (groups.length > 1 && groups.includes('*')) errs.push(fieldErrors.invalid(`${field}.apiGroups`, groups, "if '*' is present, must not specify other API groups"));
  const versions = strings(rule.apiVersions);
  if (versions.length === 0) errs.push(fieldErrors.required(`${field}.apiVersions`));
  if (versions.length > 1 && versions.includes('*')) {
    errs.push(fieldErrors.invalid(`${field}.apiVersions`, versions, "if '*' is present, must not specify other API versions"));
  }
  versions.forEach((v, i) => {
    if (v === '') errs.push(fieldErrors.required(`${field}.apiVersions[${i}]`));
  });
  errs.push(...validateResources(strings(rule.resources), `${field}.resources`));
  if (typeof rule.scope === 'string' && !SCOPES.includes(rule.scope)) errs.push(fieldErrors.notSupported(`${field}.scope`, rule.scope, SCOPES));
  return errs;
}

function labelNameErrors(key: string, field: string): FieldError[] {
  return isQualifiedName(key).map((m) => fieldErrors.invalid(field, key, m));
}

/** metav1validation.ValidateLabelSelector; [] when `sel` is not an object. Pure. */
export function validateLabelSelector(sel: unknown, field: string, allowInvalidValues: boolean): FieldError[] {
  if (!isPlainObject(sel)) return [];
  const errs: FieldError[] = [];
  const labels = isPlainObject(sel.matchLabels) ? sel.matchLabels : {};
  for (const key of Object.keys(labels).sort()) {
    errs.push(...labelNameErrors(key, `${field}.matchLabels`));
    const value = String(labels[key] ?? '');
    for (const m of isValidLabelValue(value)) errs.push(fieldErrors.invalid(`${field}.matchLabels`, value, m));
  }
  const exprs = Array.isArray(sel.matchExpressions) ? sel.matchExpressions : [];
  exprs.forEach((raw, i) => {
    const expr = isPlainObject(raw) ? raw : {};
    const path = `${field}.matchExpressions[${i}]`;
    const values = strings(expr.values);
    const op = expr.operator;
    if (op === 'In' || op === 'NotIn') {
      if (values.length === 0) errs.push(fieldErrors.required(`${path}.values`, "must be specified when `operator` is 'In' or 'NotIn'"));
    } else if (op === 'Exists' || op === 'DoesNotExist') {
      if (values.length > 0) errs.push(fieldErrors.forbidden(`${path}.values`, "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"));
    } else {
      errs.push(fieldErrors.invalid(`${path}.operator`, op ?? '', 'not a valid selector operator'));
    }
    errs.push(...labelNameErrors(typeof expr.key === 'string' ? expr.key : '', `${path}.key`));
    if (!allowInvalidValues) {
      values.forEach((v, j) => {
        for (const m of isValidLabelValue(v)) errs.push(fieldErrors.invalid(`${path}.values[${j}]`, v, m));
      });
    }
  });
  return errs;
}

function validateMatchConditions(conditions: unknown, field: string): FieldError[] {
  const list = Array.isArray(conditions) ? conditions : [];
  const errs: FieldError[] = [];
  if (list.length > MAX_MATCH_CONDITIONS) errs.push(fieldErrors.tooMany(field, list.length, MAX_MATCH_CONDITIONS));
  const names = new Set<string>();
  list.forEach((raw, i) => {
    const c = isPlainObject(raw) ? raw : {};
    const path = `${field}[${i}]`;
    const expression = typeof c.expression === 'string' ? c.expression.trim() : '';
    if (expression.length === 0) {
      errs.push(fieldErrors.required(`${path}.expression`));
    } else {
      const detail = checkMatchConditionExpression(expression);
      if (detail) errs.push(fieldErrors.invalid(`${path}.expression`, expression, detail));
    }
    const name = typeof c.name === 'string' ? c.name : '';
    if (name.length === 0) errs.push(fieldErrors.required(`${path}.name`));
    else for (const m of isQualifiedName(name)) errs.push(fieldErrors.invalid(`${path}.name`, name, m));
    if (name.length > 0) {
      if (names.has(name)) errs.push(fieldErrors.duplicate(`${path}.name`, name));
      else names.add(name);
    }
  });
  return errs;
}

function validateWebhook(hook: Json, kind: WebhookKind, opts: Options, field: string): FieldError[] {
  const errs: FieldError[] = [...validateFullyQualifiedName(`${field}.name`, hook.name)];
  (Array.isArray(hook.rules) ? hook.rules : []).forEach((r, i) => errs.push(...validateRule(isPlainObject(r) ? r : {}, `${field}.rules[${i}]`)));
  if (typeof hook.failurePolicy === 'string' && !FAILURE_POLICIES.includes(hook.failurePolicy)) {
    errs.push(fieldErrors.notSupported(`${field}.failurePolicy`, hook.failurePolicy, FAILURE_POLICIES));
  }
  if (typeof hook.matchPolicy === 'string' && !MATCH_POLICIES.includes(hook.matchPolicy)) {
    errs.push(fieldErrors.notSupported(`${field}.matchPolicy`, hook.matchPolicy, MATCH_POLICIES));
  }
  const allowedSideEffects = opts.requireNoSideEffects ? NO_SIDE_EFFECTS : ALL_SIDE_EFFECTS;
  if (hook.sideEffects === undefined || hook.sideEffects === null) {
    errs.push(fieldErrors.required(`${field}.sideEffects`, `must specify one of ${allowedSideEffects.join(', ')}`));
  } else if (!allowedSideEffects.includes(String(hook.sideEffects))) {
    errs.push(fieldErrors.notSupported(`${field}.sideEffects`, hook.sideEffects, allowedSideEffects));
  }
  if (typeof hook.timeoutSeconds === 'number' && (hook.timeoutSeconds > 30 || hook.timeoutSeconds < 1)) {
    errs.push(fieldErrors.invalid(`${field}.timeoutSeconds`, hook.timeoutSeconds, 'the timeout value must be between 1 and 30 seconds'));
  }
  errs.push(...validateLabelSelector(hook.namespaceSelector, `${field}.namespaceSelector`, opts.allowInvalidLabelValueInSelector));
  errs.push(...validateLabelSelector(hook.objectSelector, `${field}.objectSelector`, opts.allowInvalidLabelValueInSelector));
  if (kind === 'mutating' && typeof hook.reinvocationPolicy === 'string' && !REINVOCATION_POLICIES.includes(hook.reinvocationPolicy)) {
    errs.push(fieldErrors.notSupported(`${field}.reinvocationPolicy`, hook.reinvocationPolicy, REINVOCATION_POLICIES));
  }
  errs.push(...validateWebhookClientConfig(hook.clientConfig, `${field}.clientConfig`));
  if (!opts.ignoreMatchConditions) errs.push(...validateMatchConditions(hook.matchConditions, `${field}.matchConditions`));
  return errs;
}

function validateReviewVersions(versions: string[], required: boolean, field: string): FieldError[] {
  if (versions.length < 1) return [fieldErrors.required(field, `must specify one of ${ACCEPTED_REVIEW_VERSIONS.join(', ')}`)];
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  let accepted = false;
  versions.forEach((v, i) => {
    if (seen.has(v)) {
      errs.push(fieldErrors.invalid(`${field}[${i}]`, v, 'duplicate version'));
      return;
    }
    seen.add(v);
    for (const m of isDNS1035Label(v)) errs.push(fieldErrors.invalid(`${field}[${i}]`, v, m));
    if (ACCEPTED_REVIEW_VERSIONS.includes(v)) accepted = true;
  });
  if (required && !accepted) errs.push(fieldErrors.invalid(field, versions, `must include at least one of ${ACCEPTED_REVIEW_VERSIONS.join(', ')}`));
  return errs;
}

function validateConfiguration(obj: KubeObject, kind: WebhookKind, opts: Options): FieldError[] {
  const errs: FieldError[] = [];
  const names = new Set<string>();
  webhooksOf(obj).forEach((hook, i) => {
    const field = `webhooks[${i}]`;
    errs.push(...validateWebhook(hook, kind, opts, field));
    errs.push(...validateReviewVersions(strings(hook.admissionReviewVersions), opts.requireRecognizedAdmissionReviewVersion, `${field}.admissionReviewVersions`));
    const name = typeof hook.name === 'string' ? hook.name : '';
    if (opts.requireUniqueWebhookNames && name.length > 0) {
      if (names.has(name)) errs.push(fieldErrors.duplicate(`${field}.name`, name));
      else names.add(name);
    }
  });
  return errs;
}

/** Validates a new configuration of `kind` (everything strict). */
export function validateWebhookConfiguration(obj: KubeObject, kind: WebhookKind): FieldError[] {
  return validateConfiguration(obj, kind, {
    ignoreMatchConditions: false,
    requireNoSideEffects: true,
    requireRecognizedAdmissionReviewVersion: true,
    requireUniqueWebhookNames: true,
    allowInvalidLabelValueInSelector: false,
  });
}

function hasInvalidSelectorValues(hooks: Json[]): boolean {
  return hooks.some((h) => validateLabelSelector(h.namespaceSelector, '', false).length + validateLabelSelector(h.objectSelector, '', false).length > 0);
}

/**
 * Validates an update: as a create, except that checks the stored object
 * already failed (side effects, review versions, unique names, selector
 * values) stay relaxed, and unchanged matchConditions are not recompiled.
 */
export function validateWebhookConfigurationUpdate(obj: KubeObject, old: KubeObject, kind: WebhookKind): FieldError[] {
  const next = webhooksOf(obj);
  const prev = webhooksOf(old);
  const sameConditions = next.length === prev.length && next.every((h, i) => isDeepStrictEqual(h.matchConditions ?? null, prev[i].matchConditions ?? null));
  const names = prev.map((h) => h.name);
  return validateConfiguration(obj, kind, {
    ignoreMatchConditions: sameConditions,
    requireNoSideEffects: prev.every((h) => NO_SIDE_EFFECTS.includes(String(h.sideEffects))),
    requireRecognizedAdmissionReviewVersion: prev.every((h) => {
      const v = strings(h.admissionReviewVersions);
      return v.length === 0 || v.some((x) => ACCEPTED_REVIEW_VERSIONS.includes(x));
    }),
    requireUniqueWebhookNames: new Set(names).size === names.length,
    allowInvalidLabelValueInSelector: hasInvalidSelectorValues(prev),
  });
}
