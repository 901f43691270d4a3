import { rewriteObjectConstruction } from '@plinth/admission';
import { isPlainObject, type KubeObject } from '@plinth/apimachinery';
import {
  validateMutatingAdmissionPolicy,
  validateMutatingAdmissionPolicyBinding,
  validateValidatingAdmissionPolicy,
  validateValidatingAdmissionPolicyBinding,
} from '../../validation/admission-policy.validation.js';
import type { ResourceStrategy } from '../resource-definition.js';

type Json = Record<string, unknown>;

/** SetDefaults_MatchResources and SetDefaults_NamedRuleWithOperations (scope `*`). Mutates `m`. */
function defaultMatchResources(m: unknown): void {
  if (!isPlainObject(m)) return;
  m.matchPolicy ??= 'Equivalent';
  m.namespaceSelector ??= {};
  m.objectSelector ??= {};
  for (const key of ['resourceRules', 'excludeResourceRules']) {
    const rules = m[key];
    if (Array.isArray(rules)) for (const r of rules) if (isPlainObject(r)) r.scope ??= '*';
  }
}

function specOf(obj: KubeObject): Json | undefined {
  return isPlainObject(obj.spec) ? obj.spec : undefined;
}

/** The v1 (and v1alpha1) defaults of a policy's spec. Mutates `obj`. */
function defaultPolicy(obj: KubeObject, mutating: boolean): void {
  const spec = specOf(obj);
  if (!spec) return;
  spec.failurePolicy ??= 'Fail';
  if (mutating) spec.reinvocationPolicy ??= 'Never';
  defaultMatchResources(spec.matchConstraints);
}

/** The defaults of a binding's spec. Mutates `obj`. */
function defaultBinding(obj: KubeObject): void {
  const spec = specOf(obj);
  if (spec) defaultMatchResources(spec.matchResources);
}

/**
 * A policy kind's strategy: defaults on every write; the status is owned by
 * the system (cleared on create, carried over on update, recomputed by
 * `computeStatus` when given).
 */
function policyStrategy(
  defaults: (obj: KubeObject) => void,
  validate: (obj: KubeObject) => ReturnType<ResourceStrategy['validate']>,
  hasStatus: boolean,
): ResourceStrategy {
  return {
    prepareForCreate: (obj) => {
      if (hasStatus) delete obj.status;
      defaults(obj);
    },
    prepareForUpdate: (obj, old) => {
      if (hasStatus) {
        if (old.status === undefined) delete obj.status;
        else obj.status = old.status;
      }
      defaults(obj);
    },
    validate,
    validateUpdate: (obj) => validate(obj),
    allowCreateOnUpdate: false,
    allowUnconditionalUpdate: true,
  };
}

/** ValidatingAdmissionPolicy (v1). */
export const validatingAdmissionPolicyStrategy: ResourceStrategy = policyStrategy((o) => defaultPolicy(o, false), validateValidatingAdmissionPolicy, true);

/** ValidatingAdmissionPolicyBinding (v1). */
export const validatingAdmissionPolicyBindingStrategy: ResourceStrategy = policyStrategy(defaultBinding, validateValidatingAdmissionPolicyBinding, false);

/** MutatingAdmissionPolicy (v1alpha1). */
export const mutatingAdmissionPolicyStrategy: ResourceStrategy = policyStrategy(
  (o) => defaultPolicy(o, true),
  (o) => validateMutatingAdmissionPolicy(o, rewriteObjectConstruction),
  true,
);

/** MutatingAdmissionPolicyBinding (v1alpha1). */
export const mutatingAdmissionPolicyBindingStrategy: ResourceStrategy = policyStrategy(defaultBinding, validateMutatingAdmissionPolicyBinding, false);
