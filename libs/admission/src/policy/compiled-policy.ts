import type { MatchConditionV1 } from '../webhook/webhook-configuration.js';
import type { PolicyCel, PolicyCelProgram } from './policy-cel.js';
import { type CompiledMatchResources, compileMatchResources } from './policy-match.js';
import type {
  MatchResources,
  ParamKind,
  PolicyBindingV1,
  PolicyValidation,
  PolicyVariable,
  ValidatingAdmissionPolicyV1,
} from './policy-types.js';

/** One compiled expression, or the compile error it keeps for evaluation time. */
export interface CompiledExpression {
  expression: string;
  program?: PolicyCelProgram;
  /** `compilation failed: ERROR: …` when it does not compile. */
  error?: string;
}

/** What validating and mutating policies share once compiled. */
export interface CompiledPolicyBase {
  name: string;
  uid: string;
  /** metadata.generation the compiled form was built from (the cache key). */
  generation: number;
  failurePolicy: 'Fail' | 'Ignore';
  paramKind?: ParamKind;
  match: CompiledMatchResources;
  conditions: Array<{ name: string; compiled: CompiledExpression }>;
  variables: Array<{ name: string; compiled: CompiledExpression }>;
}

/** One validation of a compiled ValidatingAdmissionPolicy. */
export interface CompiledValidation {
  validation: PolicyValidation;
  compiled: CompiledExpression;
  message?: CompiledExpression;
}

/** A ValidatingAdmissionPolicy ready to evaluate. Immutable; shared by every request. */
export interface CompiledValidatingPolicy extends CompiledPolicyBase {
  validations: CompiledValidation[];
  auditAnnotations: Array<{ key: string; compiled: CompiledExpression }>;
}

/** A binding ready for matching. */
export interface CompiledBinding {
  name: string;
  binding: PolicyBindingV1;
  /** Undefined: the binding matches everything its policy matches. */
  match?: CompiledMatchResources;
  matchResources?: MatchResources;
  validationActions: string[];
}

/** Compiles one expression in the policy environment; never throws. */
export function compileExpression(cel: PolicyCel, expression: string | null | undefined): CompiledExpression {
  const src = expression ?? '';
  try {
    return { expression: src, program: cel.compile(src, true) };
  } catch (err) {
    return { expression: src, error: `compilation failed: ${err instanceof Error ? err.message : String(err)}` };
  }
}

/** The parts every policy kind shares, compiled. Pure apart from compilation. */
export function compilePolicyBase(
  cel: PolicyCel,
  metadata: { name?: string; uid?: string; generation?: number },
  spec: {
    failurePolicy?: string | null;
    paramKind?: ParamKind | null;
    matchConstraints?: MatchResources | null;
    matchConditions?: MatchConditionV1[] | null;
    variables?: PolicyVariable[] | null;
  },
): CompiledPolicyBase {
  return {
    name: metadata.name ?? '',
    uid: metadata.uid ?? '',
    generation: metadata.generation ?? 0,
    failurePolicy: spec.failurePolicy === 'Ignore' ? 'Ignore' : 'Fail',
    paramKind: spec.paramKind ?? undefined,
    match: compileMatchResources(spec.matchConstraints),
    conditions: (spec.matchConditions ?? []).map((c) => ({ name: c.name, compiled: compileExpression(cel, c.expression) })),
    variables: (spec.variables ?? []).map((v) => ({ name: v.name, compiled: compileExpression(cel, v.expression) })),
  };
}

/** Compiles a ValidatingAdmissionPolicy (every expression once). Does not mutate `policy`. */
export function compileValidatingPolicy(cel: PolicyCel, policy: ValidatingAdmissionPolicyV1): CompiledValidatingPolicy {
  const spec = policy.spec ?? {};
  return {
    ...compilePolicyBase(cel, policy.metadata, spec),
    validations: (spec.validations ?? []).map((v) => ({
      validation: v,
      compiled: compileExpression(cel, v.expression),
      message: v.messageExpression ? compileExpression(cel, v.messageExpression) : undefined,
    })),
    auditAnnotations: (spec.auditAnnotations ?? []).map((a) => ({ key: a.key, compiled: compileExpression(cel, a.valueExpression) })),
  };
}

/** Prepares a binding for matching. Does not mutate `binding`. */
export function compileBinding(binding: PolicyBindingV1): CompiledBinding {
  const spec = binding.spec ?? {};
  return {
    name: binding.metadata.name ?? '',
    binding,
    match: spec.matchResources ? compileMatchResources(spec.matchResources) : undefined,
    matchResources: spec.matchResources ?? undefined,
    validationActions: spec.validationActions ?? [],
  };
}
