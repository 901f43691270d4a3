import { policyCel } from './policy-cel.adapter.js';
import { type FieldError, fieldErrors, isPlainObject, isQualifiedName, type KubeObject, validateConditions } from '@plinth/apimachinery';
import { JsonPathError, parseJsonPath } from '../../table/jsonpath.js';
import { validateLabelSelector, validateRule } from './webhook-configuration.validation.js';

/**
 * Validation of ValidatingAdmissionPolicy(Binding) and
 * MutatingAdmissionPolicy(Binding), as upstream's
 * pkg/apis/admissionregistration/validation: required fields, enums,
 * rules, selectors, and every CEL expression compiled in the policy
 * environment (`compilation failed: ERROR: <input>:L:C: …`).
 */

type Json = Record<string, unknown>;

const FAILURE_POLICIES = ['Fail', 'Ignore'];
const MATCH_POLICIES = ['Equivalent', 'Exact'];
const REASONS = ['Unauthorized', 'Forbidden', 'Invalid', 'RequestEntityTooLarge'];
const VALIDATION_ACTIONS = ['Deny', 'Warn', 'Audit'];
const NOT_FOUND_ACTIONS = ['Allow', 'Deny'];
const PATCH_TYPES = ['ApplyConfiguration', 'JSONPatch'];
const REINVOCATION = ['IfNeeded', 'Never'];
const CEL_IDENTIFIER = /^[_a-zA-Z][_a-zA-Z0-9]*$/;
const MAX_MATCH_CONDITIONS = 64;
/** upstream's supportedMutatingOperations: a mutation has nothing to change on DELETE. */
const MUTATING_OPERATIONS = ['*', 'CONNECT', 'CREATE', 'UPDATE'];

function obj(v: unknown): Json {
  return isPlainObject(v) ? v : {};
}

function list(v: unknown): Json[] {
  return Array.isArray(v) ? v.map(obj) : [];
}

function text(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

function enumField(v: unknown, field: string, allowed: string[], required = false): FieldError[] {
  if (v === undefined || v === null || v === '') return required ? [fieldErrors.required(field)] : [];
  return allowed.includes(String(v)) ? [] : [fieldErrors.notSupported(field, v, allowed)];
}

/** A CEL expression of a policy: required and must compile. */
function expression(v: unknown, field: string, rewrite?: (src: string) => string): FieldError[] {
  const src = text(v);
  if (src.trim() === '') return [fieldErrors.required(field)];
  try {
    policyCel.compile(rewrite ? rewrite(src) : src);
    return [];
  } catch (err) {
    return [fieldErrors.invalid(field, src, `compilation failed: ${err instanceof Error ? err.message : String(err)}`)];
  }
}

function validateMatchResources(m: Json, field: string, requireRules: boolean): FieldError[] {
  const errs: FieldError[] = [];
  errs.push(...enumField(m.matchPolicy, `${field}.matchPolicy`, MATCH_POLICIES));
  errs.push(...validateLabelSelector(m.namespaceSelector, `${field}.namespaceSelector`, false));
  errs.push(...validateLabelSelector(m.objectSelector, `${field}.objectSelector`, false));
  const rules = list(m.resourceRules);
  if (requireRules && rules.length === 0) errs.push(fieldErrors.required(`${field}.resourceRules`));
  rules.forEach((r, i) => errs.push(...validateRule(r, `${field}.resourceRules[${i}]`)));
  list(m.excludeResourceRules).forEach((r, i) => errs.push(...validateRule(r, `${field}.excludeResourceRules[${i}]`)));
  return errs;
}

/**
 * The operations a mutating policy or binding may match: every operation of
 * every resourceRule must be one of MUTATING_OPERATIONS. As upstream, the
 * error path has no index (`spec.matchConstraints.resourceRules.operations`).
 */
function validateMutatingOperations(m: unknown, field: string): FieldError[] {
  const errs: FieldError[] = [];
  for (const rule of list(obj(m).resourceRules)) {
    for (const op of Array.isArray(rule.operations) ? rule.operations : []) {
      if (!MUTATING_OPERATIONS.includes(String(op))) errs.push(fieldErrors.notSupported(`${field}.resourceRules.operations`, op, MUTATING_OPERATIONS));
    }
  }
  return errs;
}

function validateMatchConditions(v: unknown, field: string): FieldError[] {
  const errs: FieldError[] = [];
  const conditions = list(v);
  if (conditions.length > MAX_MATCH_CONDITIONS) errs.push(fieldErrors.tooMany(field, conditions.length, MAX_MATCH_CONDITIONS));
  const seen = new Set<string>();
  conditions.forEach((c, i) => {
    const name = text(c.name);
    if (!name) errs.push(fieldErrors.required(`${field}[${i}].name`));
    else if (seen.has(name)) errs.push(fieldErrors.duplicate(`${field}[${i}].name`, name));
    else errs.push(...isQualifiedName(name).map((m) => fieldErrors.invalid(`${field}[${i}].name`, name, m)));
    seen.add(name);
    errs.push(...expression(c.expression, `${field}[${i}].expression`));
  });
  return errs;
}

function validateVariables(v: unknown, field: string): FieldError[] {
  const errs: FieldError[] = [];
  list(v).forEach((variable, i) => {
    const name = text(variable.name);
    if (!name) errs.push(fieldErrors.required(`${field}[${i}].name`));
    else if (!CEL_IDENTIFIER.test(name)) errs.push(fieldErrors.invalid(`${field}[${i}].name`, name, 'name is not a valid CEL identifier'));
    errs.push(...expression(variable.expression, `${field}[${i}].expression`));
  });
  return errs;
}

function validateParamKind(v: unknown, field: string): FieldError[] {
  if (v === undefined || v === null) return [];
  const p = obj(v);
  const errs: FieldError[] = [];
  if (!text(p.apiVersion)) errs.push(fieldErrors.required(`${field}.apiVersion`));
  if (!text(p.kind)) errs.push(fieldErrors.required(`${field}.kind`));
  return errs;
}

function validateValidations(spec: Json): FieldError[] {
  const errs: FieldError[] = [];
  list(spec.validations).forEach((v, i) => {
    const f = `spec.validations[${i}]`;
    errs.push(...expression(v.expression, `${f}.expression`));
    const message = text(v.message);
    if (message.includes('\n')) errs.push(fieldErrors.invalid(`${f}.message`, message, 'message must not contain line breaks'));
    else if (message && message.trim() === '') errs.push(fieldErrors.invalid(`${f}.message`, message, 'message must be non-empty if specified'));
    if (text(v.expression).includes('\n') && !message) errs.push(fieldErrors.required(`${f}.message`, 'message must be specified if expression contains line breaks'));
    if (v.messageExpression !== undefined && v.messageExpression !== null) errs.push(...expression(v.messageExpression, `${f}.messageExpression`));
    errs.push(...enumField(v.reason, `${f}.reason`, REASONS));
  });
  const keys = new Set<string>();
  list(spec.auditAnnotations).forEach((a, i) => {
    const f = `spec.auditAnnotations[${i}]`;
    const key = text(a.key);
    if (!key) errs.push(fieldErrors.required(`${f}.key`));
    else if (keys.has(key)) errs.push(fieldErrors.duplicate(`${f}.key`, key));
    else errs.push(...isQualifiedName(key).map((m) => fieldErrors.invalid(`${f}.key`, key, m)));
    keys.add(key);
    errs.push(...expression(a.valueExpression, `${f}.valueExpression`));
  });
  return errs;
}

/** ValidatingAdmissionPolicy (create and update alike). */
export function validateValidatingAdmissionPolicy(o: KubeObject): FieldError[] {
  const spec = obj(o.spec);
  const errs: FieldError[] = [];
  errs.push(...validateParamKind(spec.paramKind, 'spec.paramKind'));
  if (!isPlainObject(spec.matchConstraints)) errs.push(fieldErrors.required('spec.matchConstraints'));
  else errs.push(...validateMatchResources(spec.matchConstraints, 'spec.matchConstraints', true));
  if (list(spec.validations).length === 0 && list(spec.auditAnnotations).length === 0) {
    errs.push(fieldErrors.required('spec.validations', 'validations or auditAnnotations must contain at least one item'));
    errs.push(fieldErrors.required('spec.auditAnnotations', 'validations or auditAnnotations must contain at least one item'));
  }
  errs.push(...enumField(spec.failurePolicy, 'spec.failurePolicy', FAILURE_POLICIES, true));
  errs.push(...validateMatchConditions(spec.matchConditions, 'spec.matchConditions'));
  errs.push(...validateVariables(spec.variables, 'spec.variables'));
  errs.push(...validateValidations(spec));
  return errs;
}

/** An ExpressionWarning's fieldRef: required, and a JSONPath (checked as upstream: `{fieldRef}` must parse). */
function validateFieldRef(v: unknown, field: string): FieldError[] {
  const ref = text(v).trim();
  if (ref === '') return [fieldErrors.required(field)];
  try {
    // client-go's parser reads a leading bare name as a field; this one wants a dot first.
    parseJsonPath(`{${/^[A-Za-z_]/.test(ref) ? '.' : ''}${ref}}`);
    return [];
  } catch (err) {
    if (!(err instanceof JsonPathError)) throw err;
    return [fieldErrors.invalid(field, ref, `invalid JSONPath: ${err.message}`)];
  }
}

/**
 * A status written through `validatingadmissionpolicies/status`
 * (ValidateValidatingAdmissionPolicyStatusUpdate): every expression
 * warning needs a fieldRef and a warning; conditions as metav1.Conditions.
 */
export function validateValidatingAdmissionPolicyStatus(o: KubeObject): FieldError[] {
  const status = obj(o.status);
  const errs: FieldError[] = [];
  list(obj(status.typeChecking).expressionWarnings).forEach((w, i) => {
    const f = `status.typeChecking.expressionWarnings[${i}]`;
    if (!text(w.warning)) errs.push(fieldErrors.required(`${f}.warning`));
    errs.push(...validateFieldRef(w.fieldRef, `${f}.fieldRef`));
  });
  errs.push(...validateConditions(status.conditions, 'status.conditions'));
  return errs;
}

function validateParamRef(v: unknown, field: string): FieldError[] {
  if (v === undefined || v === null) return [];
  const p = obj(v);
  const errs: FieldError[] = [];
  const name = text(p.name);
  const hasSelector = isPlainObject(p.selector);
  if (name && hasSelector) errs.push(fieldErrors.forbidden(field, '`name` and `selector` are mutually exclusive'));
  if (!name && !hasSelector) errs.push(fieldErrors.required(field, 'one of `name` or `selector` must be set'));
  if (hasSelector) errs.push(...validateLabelSelector(p.selector, `${field}.selector`, false));
  errs.push(...enumField(p.parameterNotFoundAction, `${field}.parameterNotFoundAction`, NOT_FOUND_ACTIONS, true));
  return errs;
}

function validateBindingCommon(spec: Json): FieldError[] {
  const errs: FieldError[] = [];
  if (!text(spec.policyName)) errs.push(fieldErrors.required('spec.policyName'));
  errs.push(...validateParamRef(spec.paramRef, 'spec.paramRef'));
  if (isPlainObject(spec.matchResources)) errs.push(...validateMatchResources(spec.matchResources, 'spec.matchResources', false));
  return errs;
}

/** ValidatingAdmissionPolicyBinding (create and update alike). */
export function validateValidatingAdmissionPolicyBinding(o: KubeObject): FieldError[] {
  const spec = obj(o.spec);
  const errs = validateBindingCommon(spec);
  const actions = Array.isArray(spec.validationActions) ? spec.validationActions : [];
  if (actions.length === 0) errs.push(fieldErrors.required('spec.validationActions'));
  const seen = new Set<unknown>();
  actions.forEach((a, i) => {
    if (seen.has(a)) errs.push(fieldErrors.duplicate(`spec.validationActions[${i}]`, a));
    seen.add(a);
    if (!VALIDATION_ACTIONS.includes(String(a))) errs.push(fieldErrors.notSupported(`spec.validationActions[${i}]`, a, VALIDATION_ACTIONS));
  });
  if (seen.has('Deny') && seen.has('Warn')) {
    errs.push(fieldErrors.invalid('spec.validationActions', actions, 'must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)'));
  }
  return errs;
}

/** MutatingAdmissionPolicy (create and update alike); `rewrite` turns construction syntax into what the CEL parser reads. */
export function validateMutatingAdmissionPolicy(o: KubeObject, rewrite: (src: string) => string): FieldError[] {
  const spec = obj(o.spec);
  const errs: FieldError[] = [];
  errs.push(...validateParamKind(spec.paramKind, 'spec.paramKind'));
  if (!isPlainObject(spec.matchConstraints)) errs.push(fieldErrors.required('spec.matchConstraints'));
  else errs.push(...validateMatchResources(spec.matchConstraints, 'spec.matchConstraints', true), ...validateMutatingOperations(spec.matchConstraints, 'spec.matchConstraints'));
  const mutations = list(spec.mutations);
  if (mutations.length === 0) errs.push(fieldErrors.required('spec.mutations'));
  mutations.forEach((m, i) => {
    const f = `spec.mutations[${i}]`;
    errs.push(...enumField(m.patchType, `${f}.patchType`, PATCH_TYPES, true));
    if (m.patchType === 'JSONPatch') {
      if (!isPlainObject(m.jsonPatch)) errs.push(fieldErrors.required(`${f}.jsonPatch`, 'must be specified when patchType is JSONPatch'));
      else errs.push(...expression(m.jsonPatch.expression, `${f}.jsonPatch.expression`, rewrite));
      if (m.applyConfiguration !== undefined && m.applyConfiguration !== null) errs.push(fieldErrors.forbidden(`${f}.applyConfiguration`, 'must not be specified when patchType is JSONPatch'));
    } else if (m.patchType === 'ApplyConfiguration') {
      if (!isPlainObject(m.applyConfiguration)) errs.push(fieldErrors.required(`${f}.applyConfiguration`, 'must be specified when patchType is ApplyConfiguration'));
      else errs.push(...expression(m.applyConfiguration.expression, `${f}.applyConfiguration.expression`, rewrite));
      if (m.jsonPatch !== undefined && m.jsonPatch !== null) errs.push(fieldErrors.forbidden(`${f}.jsonPatch`, 'must not be specified when patchType is ApplyConfiguration'));
    }
  });
  errs.push(...enumField(spec.failurePolicy, 'spec.failurePolicy', FAILURE_POLICIES, true));
  errs.push(...enumField(spec.reinvocationPolicy, 'spec.reinvocationPolicy', REINVOCATION, true));
  errs.push(...validateMatchConditions(spec.matchConditions, 'spec.matchConditions'));
  errs.push(...validateVariables(spec.variables, 'spec.variables'));
  return errs;
}

/** MutatingAdmissionPolicyBinding (create and update alike). */
export function validateMutatingAdmissionPolicyBinding(o: KubeObject): FieldError[] {
  const spec = obj(o.spec);
  const errs = validateBindingCommon(spec);
  if (isPlainObject(spec.matchResources)) errs.push(...validateMutatingOperations(spec.matchResources, 'spec.matchResources'));
  return errs;
}
