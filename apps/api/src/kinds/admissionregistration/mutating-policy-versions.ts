import { rewriteObjectConstruction } from '@plinth/admission';
import { isPlainObject, type KubeObject } from '@plinth/apimachinery';
import type { ResourceDefinition, ResourceStrategy, StorageConversion } from '../../registry/resource-definition.js';
import { mutatingAdmissionPolicyBindingResource, mutatingAdmissionPolicyResource } from './admission-policy.resources.js';
import { defaultMatchResources, mutatingAdmissionPolicyBindingStrategy, mutatingAdmissionPolicyStrategy } from './admission-policy.strategy.js';
import { validateMutatingAdmissionPolicy } from './admission-policy.validation.js';

const GROUP = 'admissionregistration.k8s.io';
/** The version MutatingAdmissionPolicy objects are stored in, as upstream 1.35 (v1beta1, introduced in 1.34). */
export const MUTATING_POLICY_STORAGE_VERSION = 'v1beta1';

/** A copy of `obj` under `apiVersion` (the same object when it already is). */
function withApiVersion(obj: KubeObject, apiVersion: string): KubeObject {
  return obj.apiVersion === apiVersion ? obj : { ...obj, apiVersion };
}

/**
 * v1alpha1 and v1beta1 of MutatingAdmissionPolicy and its binding have the
 * same fields (upstream's conversion between them is generated field by
 * field), so the round trip is the apiVersion alone: objects are stored as
 * v1beta1 and every field survives v1alpha1 → v1beta1 → v1alpha1. Objects
 * stored as v1alpha1 before v1beta1 existed are read through either.
 */
function storedAsBeta(version: string): StorageConversion {
  return {
    toStored: (obj) => withApiVersion(obj, `${GROUP}/${MUTATING_POLICY_STORAGE_VERSION}`),
    fromStored: (obj) => withApiVersion(obj, `${GROUP}/${version}`),
  };
}

/**
 * v1beta1's defaults, as upstream's v1beta1 defaults.go: failurePolicy
 * Fail (SetDefaults_MutatingAdmissionPolicySpec) and the match resources'
 * defaults; reinvocationPolicy has none and is required. Mutates `obj`.
 */
function defaultBetaPolicy(obj: KubeObject): void {
  if (!isPlainObject(obj.spec)) return;
  obj.spec.failurePolicy ??= 'Fail';
  defaultMatchResources(obj.spec.matchConstraints);
}

/** The v1beta1 policy strategy: v1beta1's defaults on every write, the same validation as v1alpha1. */
const betaPolicyStrategy: ResourceStrategy = {
  prepareForCreate: (obj) => {
    delete obj.status;
    defaultBetaPolicy(obj);
  },
  prepareForUpdate: (obj, old) => {
    if (old.status === undefined) delete obj.status;
    else obj.status = old.status;
    defaultBetaPolicy(obj);
  },
  validate: (obj) => validateMutatingAdmissionPolicy(obj, rewriteObjectConstruction),
  validateUpdate: (obj) => validateMutatingAdmissionPolicy(obj, rewriteObjectConstruction),
  allowCreateOnUpdate: false,
  allowUnconditionalUpdate: true,
};

/** The v1beta1 binding strategy: binding defaults (the same in both versions). */
const betaBindingStrategy: ResourceStrategy = mutatingAdmissionPolicyBindingStrategy;

/** `def` served at `version`, stored as v1beta1. */
function at(def: ResourceDefinition, version: string, strategy: ResourceStrategy): ResourceDefinition {
  return {
    ...def,
    version,
    strategy,
    subresources: def.subresources.map((s) => ({ ...s, version })),
    conversion: storedAsBeta(version),
  };
}

/** admissionregistration.k8s.io/v1beta1 MutatingAdmissionPolicy (beta in 1.34 and 1.35; the storage version). */
export const mutatingAdmissionPolicyV1beta1: ResourceDefinition = at(mutatingAdmissionPolicyResource, 'v1beta1', betaPolicyStrategy);

/** admissionregistration.k8s.io/v1beta1 MutatingAdmissionPolicyBinding. */
export const mutatingAdmissionPolicyBindingV1beta1: ResourceDefinition = at(mutatingAdmissionPolicyBindingResource, 'v1beta1', betaBindingStrategy);

/** admissionregistration.k8s.io/v1alpha1 MutatingAdmissionPolicy, now stored as v1beta1. */
export const mutatingAdmissionPolicyV1alpha1: ResourceDefinition = at(mutatingAdmissionPolicyResource, 'v1alpha1', mutatingAdmissionPolicyStrategy);

/** admissionregistration.k8s.io/v1alpha1 MutatingAdmissionPolicyBinding, now stored as v1beta1. */
export const mutatingAdmissionPolicyBindingV1alpha1: ResourceDefinition = at(mutatingAdmissionPolicyBindingResource, 'v1alpha1', mutatingAdmissionPolicyBindingStrategy);

/**
 * MutatingAdmissionPolicy and its binding at both served versions, v1beta1
 * first (the preferred version in discovery); each version is served when
 * PLINTH_RUNTIME_CONFIG enables it (both off by default, as upstream).
 */
export const mutatingPolicyResources: ResourceDefinition[] = [
  mutatingAdmissionPolicyV1beta1,
  mutatingAdmissionPolicyBindingV1beta1,
  mutatingAdmissionPolicyV1alpha1,
  mutatingAdmissionPolicyBindingV1alpha1,
];
