import { CelBudget, CelCompileError, CelCostLimitError, type CelProgram, compileCel, jsonToCel } from '@plinth/cel';
import type { MatchConditionV1 } from './webhook-configuration.js';

/**
 * The variables of webhook matchConditions, as upstream's admission CEL
 * environment: `object`, `oldObject`, `request` (the AdmissionRequest
 * without uid/object/oldObject) and `namespaceObject` (always null for
 * webhooks). `params` and `authorizer` are not available (expressions naming
 * them do not compile). The environment itself is @plinth/cel's, with the
 * Kubernetes libraries and cost limits CRD validation rules have.
 */
const MATCH_CONDITION_VARIABLES = { object: 'dyn', oldObject: 'dyn', request: 'dyn', namespaceObject: 'dyn' };

/**
 * Upstream's RuntimeCELCostBudgetMatchConditions: what all the
 * matchConditions of one webhook may cost together on one request (each
 * also within the per-call limit; together within 250 ms of wall clock).
 */
export const MATCH_CONDITIONS_COST_BUDGET = 2_500_000;

/** Upstream's error when the conditions ran out of their budget (to the failure policy, as a whole). */
export const MATCH_CONDITIONS_OUT_OF_BUDGET = 'validation failed due to running out of cost budget, no further validation rules will be run';

/** The activation of a matchCondition evaluation. */
export interface MatchActivation {
  object: unknown;
  oldObject: unknown;
  request: Record<string, unknown>;
}

/** A compiled matchCondition. */
export interface CompiledCondition {
  name: string;
  expression: string;
  /** The program, or the compile error text (a stored expression may no longer compile). */
  program?: CelProgram;
  error?: string;
}

function firstLine(message: string): string {
  const line = message.split('\n')[0].trim();
  return line.charAt(0).toLowerCase() + line.slice(1);
}

/** Compiles one expression: the program, or upstream's error detail. */
function compileCondition(expression: string): { program?: CelProgram; error?: string } {
  let program: CelProgram;
  try {
    program = compileCel(expression, MATCH_CONDITION_VARIABLES);
  } catch (err) {
    if (err instanceof CelCompileError) return { error: `compilation failed: ${err.message}` };
    throw err;
  }
  if (program.type !== 'bool') return { error: `must evaluate to bool but got ${program.type}` };
  return { program };
}

/**
 * Compiles and type-checks one expression. Returns undefined when it is a
 * valid bool expression, or upstream's error detail: `compilation failed:
 * ERROR: <input>:L:C: …` for syntax/type errors, `must evaluate to bool but
 * got T` for other result types.
 */
export function checkMatchConditionExpression(expression: string): string | undefined {
  return compileCondition(expression).error;
}

/** Compiles every condition; a condition that fails to compile keeps its error for evaluation time. */
export function compileMatchConditions(conditions: readonly MatchConditionV1[]): CompiledCondition[] {
  return conditions.map((c) => ({ name: c.name, expression: c.expression, ...compileCondition(c.expression) }));
}

/** The outcome of evaluating a webhook's conditions: matched, skipped (a false condition), or errors. */
export interface MatchOutcome {
  matches: boolean;
  errors: string[];
}

/**
 * Evaluates the conditions as upstream's matchconditions.Matcher: all of
 * them, sharing one cost budget (`budget`, by default
 * MATCH_CONDITIONS_COST_BUDGET and 250 ms); running out of it is one error
 * for the failure policy, whatever the other conditions said; otherwise
 * any false skips the webhook (even with errors elsewhere); otherwise any
 * error is returned for the failure policy to decide; otherwise it matches.
 */
export function evaluateMatchConditions(conditions: readonly CompiledCondition[], activation: MatchActivation, budget?: CelBudget): MatchOutcome {
  const ctx = {
    object: jsonToCel(activation.object ?? null),
    oldObject: jsonToCel(activation.oldObject ?? null),
    request: jsonToCel(activation.request),
    namespaceObject: null,
  };
  const shared = budget ?? new CelBudget(MATCH_CONDITIONS_COST_BUDGET);
  const errors: string[] = [];
  let skip = false;
  for (const c of conditions) {
    if (!c.program) {
      errors.push(`expression '${c.expression}' resulted in error: ${c.error}`);
      continue;
    }
    try {
      const v = c.program.evaluate(ctx, shared);
      if (v === false) skip = true;
      else if (v !== true) errors.push(`expression '${c.expression}' resulted in error: no such overload`);
    } catch (err) {
      if (err instanceof CelCostLimitError && err.scope === 'total') return { matches: false, errors: [MATCH_CONDITIONS_OUT_OF_BUDGET] };
      errors.push(`expression '${c.expression}' resulted in error: ${firstLine(err instanceof Error ? err.message : String(err))}`);
    }
  }
  if (skip) return { matches: false, errors: [] };
  return { matches: errors.length === 0, errors };
}
