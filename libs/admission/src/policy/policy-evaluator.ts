import type { CompiledExpression, CompiledPolicyBase, CompiledValidatingPolicy } from './compiled-policy.js';
import type { PolicyCel, PolicyCelBudget, PolicyCelResult } from './policy-cel.js';

/** The JSON inputs of one policy evaluation (converted to CEL values here). */
export interface PolicyInput {
  object: unknown;
  oldObject: unknown;
  request: Record<string, unknown>;
  params: unknown;
  namespaceObject: unknown;
  /** The `authorizer` variable (a CEL value), when the server has one. */
  authorizer?: unknown;
}

/** Upstream's out-of-budget text; no further expression of the policy runs after it. */
export const OUT_OF_BUDGET = 'validation failed due to running out of cost budget, no further validation rules will be run';

/** Thrown inside lazy variable access so the outer expression fails with it. */
class CompositedVariableError extends Error {}

/**
 * One evaluation context of a policy for one binding and one param:
 * the CEL activation (variables evaluated lazily, once, on first use, as
 * upstream's composition environment) and the shared cost budget.
 */
export class PolicyActivation {
  readonly budget: PolicyCelBudget;
  readonly activation: Record<string, unknown>;
  /** Set once the shared budget ran out; every later evaluation fails with it. */
  outOfBudget = false;

  constructor(
    private readonly cel: PolicyCel,
    policy: CompiledPolicyBase,
    input: PolicyInput,
  ) {
    this.budget = cel.newBudget();
    const variables: Record<string, unknown> = {};
    this.activation = {
      object: cel.fromJson(input.object ?? null),
      oldObject: cel.fromJson(input.oldObject ?? null),
      request: cel.fromJson(input.request),
      params: cel.fromJson(input.params ?? null),
      namespaceObject: cel.fromJson(input.namespaceObject ?? null),
      variables,
    };
    if (input.authorizer !== undefined) this.activation.authorizer = input.authorizer;
    for (const v of policy.variables) this.defineVariable(variables, v.name, v.compiled);
  }

  private defineVariable(target: Record<string, unknown>, name: string, compiled: CompiledExpression): void {
    let result: PolicyCelResult | undefined;
    Object.defineProperty(target, name, {
      enumerable: true,
      get: () => {
        result ??= this.run(compiled);
        if (result.ok) return result.value;
        throw new CompositedVariableError(`composited variable "${name}" fails to evaluate: ${result.error}`);
      },
    });
  }

  /** Evaluates one expression; compile errors and runtime errors come back as upstream's texts. */
  run(compiled: CompiledExpression): PolicyCelResult {
    if (this.outOfBudget) return { ok: false, error: OUT_OF_BUDGET, outOfBudget: true };
    if (!compiled.program) return { ok: false, error: `compilation error: ${compiled.error}`, outOfBudget: false };
    const r = compiled.program.evaluate(this.activation, this.budget);
    if (r.ok) return r;
    if (r.outOfBudget || this.budget.remaining <= 0) {
      this.outOfBudget = true;
      return { ok: false, error: OUT_OF_BUDGET, outOfBudget: true };
    }
    return { ok: false, error: `expression '${compiled.expression}' resulted in error: ${r.error}`, outOfBudget: false };
  }
}

/** The outcome of matchConditions: matched, skipped, or an error for the failure policy. */
export type ConditionOutcome = { matches: true } | { matches: false } | { error: string };

/** upstream's matchconditions.Matcher: any false skips; else errors go to the failure policy; else matches. */
export function evaluateConditions(policy: CompiledPolicyBase, act: PolicyActivation): ConditionOutcome {
  const errors: string[] = [];
  for (const c of policy.conditions) {
    const r = act.run(c.compiled);
    if (!r.ok) {
      errors.push(r.error);
      continue;
    }
    if (r.value === false) return { matches: false };
    if (r.value !== true) errors.push(`expression '${c.compiled.expression}' resulted in error: no such overload`);
  }
  if (errors.length === 0) return { matches: true };
  if (policy.failurePolicy === 'Ignore') return { matches: false };
  return { error: errors.length === 1 ? errors[0] : `[${errors.join(', ')}]` };
}

/** One validation's decision, as upstream's PolicyDecision. */
export interface PolicyDecision {
  action: 'admit' | 'deny';
  evaluation: 'admit' | 'deny' | 'error';
  message: string;
  reason?: string;
  /** Index of the validation in the policy (-1: the policy as a whole). */
  index: number;
}

/** An audit annotation's outcome. */
export interface AuditAnnotationDecision {
  key: string;
  action: 'publish' | 'exclude' | 'error';
  value?: string;
  error?: string;
}

/** Decisions and audit annotations of one evaluation. */
export interface ValidateResult {
  decisions: PolicyDecision[];
  auditAnnotations: AuditAnnotationDecision[];
}

const MAX_MESSAGE_BYTES = 5 * 1024;

function failure(policy: CompiledPolicyBase, message: string, index = -1): PolicyDecision {
  return { action: policy.failurePolicy === 'Ignore' ? 'admit' : 'deny', evaluation: 'error', message, index };
}

function denialMessage(v: CompiledValidatingPolicy['validations'][number], act: PolicyActivation): string {
  if (v.message?.program) {
    const m = act.run(v.message);
    if (m.ok && typeof m.value === 'string') {
      const text = m.value.trim();
      if (text !== '' && Buffer.byteLength(text) <= MAX_MESSAGE_BYTES && !text.includes('\n')) return text;
    }
  }
  const message = (v.validation.message ?? '').trim();
  if (message !== '') return message;
  return `failed expression: ${v.validation.expression.trim()}`;
}

function auditAnnotations(policy: CompiledValidatingPolicy, act: PolicyActivation): AuditAnnotationDecision[] {
  const failAction = policy.failurePolicy === 'Ignore' ? 'exclude' : 'error';
  return policy.auditAnnotations.map(({ key, compiled }) => {
    const r = act.run(compiled);
    if (!r.ok) return { key, action: failAction, error: r.error };
    if (r.value === null) return { key, action: 'exclude' };
    if (typeof r.value !== 'string') {
      const type = typeof r.value === 'bigint' ? 'int' : typeof r.value === 'boolean' ? 'bool' : typeof r.value === 'number' ? 'double' : 'map';
      return {
        key,
        action: 'error',
        error: `valueExpression '${compiled.expression}' resulted in unsupported return type: ${type}. Return type must be either string or null.`,
      };
    }
    const value = r.value.trim();
    return value === '' ? { key, action: 'exclude' } : { key, action: 'publish', value };
  });
}

/**
 * Evaluates a ValidatingAdmissionPolicy for one binding and param, as
 * upstream's validator.Validate: matchConditions (false: no decisions),
 * then every validation (false → deny with messageExpression, message or
 * `failed expression: …`; error → the failure policy), then audit
 * annotations. Running out of the shared budget fails the whole policy.
 */
export function validatePolicy(policy: CompiledValidatingPolicy, act: PolicyActivation): ValidateResult {
  const cond = evaluateConditions(policy, act);
  if ('error' in cond) return { decisions: [failure(policy, cond.error)], auditAnnotations: [] };
  if (!cond.matches) return { decisions: [], auditAnnotations: [] };
  const decisions: PolicyDecision[] = [];
  for (let i = 0; i < policy.validations.length; i++) {
    const v = policy.validations[i];
    const r = act.run(v.compiled);
    if (!r.ok) {
      if (r.outOfBudget) return { decisions: [failure(policy, r.error)], auditAnnotations: [] };
      decisions.push(failure(policy, r.error, i));
    } else if (r.value !== true) {
      decisions.push({ action: 'deny', evaluation: 'deny', reason: v.validation.reason || 'Invalid', message: denialMessage(v, act), index: i });
    } else {
      decisions.push({ action: 'admit', evaluation: 'admit', message: '', index: i });
    }
  }
  if (act.outOfBudget) return { decisions: [failure(policy, OUT_OF_BUDGET)], auditAnnotations: [] };
  return { decisions, auditAnnotations: auditAnnotations(policy, act) };
}
