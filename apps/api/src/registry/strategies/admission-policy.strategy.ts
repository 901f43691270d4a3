import { rewriteObjectConstruction } from '@plinth/admission';
import { isDeepStrictEqual } from 'node:util';
import { isPlainObject, type KubeObject } from '@plinth/apimachinery';
import { type TypedKind, typeCheckPolicy } from '../../admission/policy-type-check.js';
import { builtinResources } from '../builtin-resources.js';
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

/** A built-in kind by group/version/resource, for type checking (read at call time: builtin-resources imports this module). */
function builtinKind(group: string, version: string, resource: string): TypedKind | undefined {
  const def = builtinResources.find((d) => d.group === group && d.version === version && d.resource === resource);
  return def ? { group: def.group, version: def.version, kind: def.kind, schema: def.schema } : undefined;
}

/**
 * The status the system keeps for a ValidatingAdmissionPolicy: the
 * generation it describes and the type-checking warnings of its
 * expressions against the built-in kinds its rules name. Mutates `obj`.
 */
function setTypeChecking(obj: KubeObject, generation: number): void {
  const expressionWarnings = typeCheckPolicy(obj, builtinKind);
  obj.status = { observedGeneration: generation, typeChecking: expressionWarnings.length > 0 ? { expressionWarnings } : {} };
}

/** ValidatingAdmissionPolicy: the common policy strategy plus status.typeChecking on every spec change. */
function validatingPolicyStrategy(): ResourceStrategy {
  const base = policyStrategy((o) => defaultPolicy(o, false), validateValidatingAdmissionPolicy, true);
  return {
    ...base,
    prepareForCreate: (obj) => {
      base.prepareForCreate(obj);
      setTypeChecking(obj, 1);
    },
    prepareForUpdate: (obj, old) => {
      base.prepareForUpdate(obj, old);
      const generation = typeof old.metadata.generation === 'number' ? old.metadata.generation : 0;
      if (!isDeepStrictEqual(obj.spec, old.spec) || !isPlainObject(old.status)) setTypeChecking(obj, isDeepStrictEqual(obj.spec, old.spec) ? generation : generation + 1);
    },
  };
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
export const validatingAdmissionPolicyStrategy: ResourceStrategy = validatingPolicyStrategy();

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
