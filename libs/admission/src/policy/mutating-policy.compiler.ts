import { type CompiledExpression, type CompiledPolicyBase, compileExpression, compilePolicyBase } from './compiled-policy.js';
import type { PolicyCel } from './policy-cel.js';
import { rewriteObjectConstruction } from './policy-construction.js';
import type { MutatingAdmissionPolicyV1alpha1 } from './policy-types.js';

/** One mutation of a compiled MutatingAdmissionPolicy. */
export interface CompiledMutation {
  patchType: 'ApplyConfiguration' | 'JSONPatch';
  compiled: CompiledExpression;
}

/** A MutatingAdmissionPolicy ready to evaluate. Immutable; shared by every request. */
export interface CompiledMutatingPolicy extends CompiledPolicyBase {
  mutations: CompiledMutation[];
  reinvokeIfNeeded: boolean;
}

function compileMutationExpression(cel: PolicyCel, expression: string): CompiledExpression {
  let src: string;
  try {
    src = rewriteObjectConstruction(expression);
  } catch (err) {
    return { expression, error: `compilation failed: ERROR: <input>:1:1: ${err instanceof Error ? err.message : String(err)}` };
  }
  const compiled = compileExpression(cel, src);
  return { ...compiled, expression };
}

/** Compiles a MutatingAdmissionPolicy (every expression once). Does not mutate `policy`. */
export function compileMutatingPolicy(cel: PolicyCel, policy: MutatingAdmissionPolicyV1alpha1): CompiledMutatingPolicy {
  const spec = policy.spec ?? {};
  return {
    ...compilePolicyBase(cel, policy.metadata, spec),
    mutations: (spec.mutations ?? []).map((m) => {
      const patchType = m.patchType === 'JSONPatch' ? 'JSONPatch' : 'ApplyConfiguration';
      const expression = (patchType === 'JSONPatch' ? m.jsonPatch?.expression : m.applyConfiguration?.expression) ?? '';
      return { patchType, compiled: compileMutationExpression(cel, expression) };
    }),
    reinvokeIfNeeded: spec.reinvocationPolicy === 'IfNeeded',
  };
}
