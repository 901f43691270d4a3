import type { LabelSelectorV1, MatchConditionV1, RuleWithOperationsV1 } from '../webhook/webhook-configuration.js';

/**
 * The admissionregistration.k8s.io admission policy types as they arrive in
 * JSON: ValidatingAdmissionPolicy and its binding (v1), MutatingAdmissionPolicy
 * and its binding (v1alpha1). Defaults are applied by the kinds' strategies.
 */

/** admissionregistration/v1 NamedRuleWithOperations. */
export interface NamedRuleWithOperations extends RuleWithOperationsV1 {
  resourceNames?: string[] | null;
}

/** admissionregistration/v1 MatchResources. */
export interface MatchResources {
  namespaceSelector?: LabelSelectorV1 | null;
  objectSelector?: LabelSelectorV1 | null;
  resourceRules?: NamedRuleWithOperations[] | null;
  excludeResourceRules?: NamedRuleWithOperations[] | null;
  matchPolicy?: string | null;
}

/** admissionregistration/v1 ParamKind. */
export interface ParamKind {
  apiVersion?: string | null;
  kind?: string | null;
}

/** admissionregistration/v1 ParamRef. */
export interface ParamRef {
  name?: string | null;
  namespace?: string | null;
  selector?: LabelSelectorV1 | null;
  parameterNotFoundAction?: string | null;
}

/** admissionregistration/v1 Validation. */
export interface PolicyValidation {
  expression: string;
  message?: string | null;
  reason?: string | null;
  messageExpression?: string | null;
}

/** admissionregistration/v1 AuditAnnotation. */
export interface AuditAnnotation {
  key: string;
  valueExpression: string;
}

/** admissionregistration/v1 Variable. */
export interface PolicyVariable {
  name: string;
  expression: string;
}

/** Object metadata the policy machinery reads. */
export interface PolicyMeta {
  name?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  [k: string]: unknown;
}

/** admissionregistration/v1 ValidatingAdmissionPolicy as stored. */
export interface ValidatingAdmissionPolicyV1 {
  metadata: PolicyMeta;
  spec?: {
    paramKind?: ParamKind | null;
    matchConstraints?: MatchResources | null;
    validations?: PolicyValidation[] | null;
    failurePolicy?: string | null;
    auditAnnotations?: AuditAnnotation[] | null;
    matchConditions?: MatchConditionV1[] | null;
    variables?: PolicyVariable[] | null;
  };
}

/** A ValidatingAdmissionPolicyBinding or MutatingAdmissionPolicyBinding as stored. */
export interface PolicyBindingV1 {
  metadata: PolicyMeta;
  spec?: {
    policyName?: string | null;
    paramRef?: ParamRef | null;
    matchResources?: MatchResources | null;
    validationActions?: string[] | null;
  };
}

/** admissionregistration/v1alpha1 Mutation. */
export interface PolicyMutation {
  patchType?: string | null;
  applyConfiguration?: { expression?: string | null } | null;
  jsonPatch?: { expression?: string | null } | null;
}

/** admissionregistration/v1alpha1 MutatingAdmissionPolicy as stored. */
export interface MutatingAdmissionPolicyV1alpha1 {
  metadata: PolicyMeta;
  spec?: {
    paramKind?: ParamKind | null;
    matchConstraints?: MatchResources | null;
    variables?: PolicyVariable[] | null;
    mutations?: PolicyMutation[] | null;
    failurePolicy?: string | null;
    matchConditions?: MatchConditionV1[] | null;
    reinvocationPolicy?: string | null;
  };
}

/** `&ParamKind{APIVersion:v1,Kind:ConfigMap,}`, as upstream's generated String() prints it in errors. */
export function paramKindString(p: ParamKind): string {
  return `&ParamKind{APIVersion:${p.apiVersion ?? ''},Kind:${p.kind ?? ''},}`;
}
