import type { PolicyCel, PolicyCelBudget, PolicyCelProgram } from '@plinth/admission';
import { CelBudget, CelCompileError, CelCostLimitError, celToJson, compileCel, jsonToCel } from '@plinth/cel';

/** The variables of admission policy expressions, all `dyn` as in upstream's environment for unknown kinds. */
const POLICY_VARIABLES = {
  object: 'dyn',
  oldObject: 'dyn',
  request: 'dyn',
  params: 'dyn',
  namespaceObject: 'dyn',
  variables: 'dyn',
  authorizer: 'dyn',
};

function program(expression: string): PolicyCelProgram {
  const compiled = compileCel(expression, POLICY_VARIABLES);
  return {
    expression,
    evaluate(activation, budget) {
      try {
        return { ok: true, value: compiled.evaluate(activation, budget as CelBudget) };
      } catch (err) {
        if (err instanceof CelCostLimitError) return { ok: false, error: err.message, outOfBudget: err.scope === 'total' };
        const e = err as { message?: string };
        return { ok: false, error: e.message ?? String(err), outOfBudget: false };
      }
    },
  };
}

/**
 * Admission policies' view of Plinth's one CEL environment: the Kubernetes
 * libraries, RE2 regexes, optional types, upstream's per-call limit and a
 * per-evaluation runtime budget (RuntimeCELCostBudget).
 */
export const policyCel: PolicyCel = {
  compile(expression: string): PolicyCelProgram {
    try {
      return program(expression);
    } catch (err) {
      throw new Error(err instanceof CelCompileError ? err.message : String(err));
    }
  },
  newBudget: (): PolicyCelBudget => new CelBudget(),
  fromJson: jsonToCel,
  toJson: celToJson,
};
