import { rewriteObjectConstruction } from '@plinth/admission';
import { isDeepStrictEqual } from 'node:util';
import { isPlainObject, type KubeObject, resetObjectMetaForStatus, type StructuralSchema } from '@plinth/apimachinery';
import { type TypedKind, type TypedKindLookup, typeCheckPolicy } from './policy-type-check.js';
import { objectMetaSchema } from '../../schema/object-meta.schema.js';
import {
  validateMutatingAdmissionPolicy,
  validateMutatingAdmissionPolicyBinding,
  validateValidatingAdmissionPolicy,
  validateValidatingAdmissionPolicyBinding,
  validateValidatingAdmissionPolicyStatus,
} from './admission-policy.validation.js';
import type { ResourceDefinition, ResourceStrategy, StrategyContext } from '../../registry/resource-definition.js';

type Json = Record<string, unknown>;

/** SetDefaults_MatchResources and SetDefaults_NamedRuleWithOperations (scope `*`), the same in v1alpha1 and v1beta1. Mutates `m`. */
export function defaultMatchResources(m: unknown): void {
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

/** The object schema type checking uses: a custom resource's gets apiVersion, kind and ObjectMeta, as its published OpenAPI has. */
function typedSchema(def: ResourceDefinition): StructuralSchema {
  if (!def.custom) return def.schema;
  const typeMeta: Record<string, StructuralSchema> = { apiVersion: { type: 'string' }, kind: { type: 'string' } };
  return { ...def.schema, type: 'object', properties: { ...typeMeta, ...def.schema.properties, metadata: objectMetaSchema } };
}

function typedKind(def: ResourceDefinition | undefined): TypedKind | undefined {
  return def ? { group: def.group, version: def.version, kind: def.kind, schema: typedSchema(def) } : undefined;
}

/** The kinds served to the write's tenant, built-in and custom, for type checking. */
function tenantKinds(ctx: StrategyContext): TypedKindLookup {
  return {
    byResource: (group, version, resource) => typedKind(ctx.lookup(group, version, resource)),
    byKind: (group, version, kind) => typedKind(ctx.lookupKind(group, version, kind)),
  };
}

function observedGeneration(obj: KubeObject): number {
  const g = isPlainObject(obj.status) ? obj.status.observedGeneration : undefined;
  return typeof g === 'number' ? g : 0;
}

/**
 * What upstream's status controller does once a policy's generation is
 * ahead of status.observedGeneration: type-checks the expressions against
 * the kinds (built-in and the tenant's custom resources) its rules name,
 * and records the warnings with the generation; other status fields
 * (conditions) are kept. Nothing happens when the status is current.
 * Mutates `obj`.
 */
function reconcileStatus(obj: KubeObject, generation: number, ctx: StrategyContext): void {
  if (observedGeneration(obj) >= generation) return;
  const expressionWarnings = typeCheckPolicy(obj, tenantKinds(ctx));
  const status = isPlainObject(obj.status) ? obj.status : {};
  obj.status = { ...status, observedGeneration: generation, typeChecking: expressionWarnings.length > 0 ? { expressionWarnings } : {} };
}

function generationOf(obj: KubeObject): number {
  return typeof obj.metadata.generation === 'number' ? obj.metadata.generation : 0;
}

/** ValidatingAdmissionPolicy: the common policy strategy plus status.typeChecking whenever the spec changes. */
function validatingPolicyStrategy(): ResourceStrategy {
  const base = policyStrategy((o) => defaultPolicy(o, false), validateValidatingAdmissionPolicy, true);
  return {
    ...base,
    prepareForCreate: (obj, ctx) => {
      base.prepareForCreate(obj, ctx);
      reconcileStatus(obj, 1, ctx);
    },
    prepareForUpdate: (obj, old, ctx) => {
      base.prepareForUpdate(obj, old, ctx);
      // The store bumps the generation after this when the spec changed.
      reconcileStatus(obj, generationOf(old) + (isDeepStrictEqual(obj.spec, old.spec) ? 0 : 1), ctx);
    },
  };
}

/**
 * Writes to `validatingadmissionpolicies/status`, as upstream's status
 * strategy: the spec and the metadata upstream resets are the stored
 * ones, the status is the client's (validated); a status that no longer
 * describes the current generation is recomputed, as upstream's
 * controller would right after. Mutates `obj`.
 */
function validatingPolicyStatusStrategy(): ResourceStrategy {
  return {
    prepareForCreate: () => undefined,
    prepareForUpdate: (obj, old, ctx) => {
      obj.spec = structuredClone(old.spec);
      resetObjectMetaForStatus(obj.metadata, old.metadata);
      reconcileStatus(obj, generationOf(old), ctx);
    },
    validate: () => [],
    validateUpdate: (obj) => validateValidatingAdmissionPolicyStatus(obj),
    allowCreateOnUpdate: false,
    allowUnconditionalUpdate: false,
  };
}

/**
 * A policy kind's strategy: defaults on every write; with `hasStatus`, the
 * status is the system's (cleared on create, carried over on update).
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

/** ValidatingAdmissionPolicy's `/status` subresource (v1). */
export const validatingAdmissionPolicyStatusStrategy: ResourceStrategy = validatingPolicyStatusStrategy();

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
