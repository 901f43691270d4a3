import { Environment } from '@marcbachmann/cel-js';
import type { MatchConditionV1 } from './webhook-configuration.js';

/**
 * The CEL environment of webhook matchConditions, as upstream's admission
 * CEL environment: `object`, `oldObject`, `request` (the AdmissionRequest
 * without uid/object/oldObject) and `namespaceObject` (always null for
 * webhooks), optional types on, homogeneous aggregate literals. `params` and
 * `authorizer` are not available (expressions naming them do not compile).
 *
 * CEL library: @marcbachmann/cel-js — zero dependencies, a type checker
 * (needed for upstream's "must evaluate to bool" and for CRD validation
 * rules later), parse-once programs, and it runs on Node 20.
 */
const env = new Environment({ unlistedVariablesAreDyn: false, enableOptionalTypes: true, homogeneousAggregateLiterals: true })
  .registerVariable('object', 'dyn')
  .registerVariable('oldObject', 'dyn')
  .registerVariable('request', 'dyn')
  .registerVariable('namespaceObject', 'dyn');

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
  program?: (ctx: Record<string, unknown>) => unknown;
  error?: string;
}

/** `<input>:line:col` of a character offset, 1-based as cel-go reports it. */
function position(expression: string, offset: number | undefined): string {
  const at = Math.max(0, Math.min(offset ?? 0, expression.length));
  const before = expression.slice(0, at);
  const line = before.split('\n').length;
  const col = at - (before.lastIndexOf('\n') + 1) + 1;
  return `<input>:${line}:${col}`;
}

function firstLine(message: string): string {
  const line = message.split('\n')[0].trim();
  return line.charAt(0).toLowerCase() + line.slice(1);
}

/**
 * Compiles and type-checks one expression. Returns undefined when it is a
 * valid bool expression, or upstream's error detail: `compilation failed:
 * ERROR: <input>:L:C: …` for syntax/type errors, `must evaluate to bool but
 * got T` for other result types.
 */
export function checkMatchConditionExpression(expression: string): string | undefined {
  const result = env.check(expression) as { valid: boolean; type?: string; error?: Error & { node?: { start?: number } } };
  if (!result.valid) {
    const err = result.error;
    const kind = err?.name === 'ParseError' ? 'Syntax error: ' : '';
    return `compilation failed: ERROR: ${position(expression, err?.node?.start)}: ${kind}${firstLine(err?.message ?? 'invalid expression')}`;
  }
  if (result.type !== 'bool') return `must evaluate to bool but got ${result.type}`;
  return undefined;
}

/** Compiles every condition; a condition that fails to compile keeps its error for evaluation time. */
export function compileMatchConditions(conditions: readonly MatchConditionV1[]): CompiledCondition[] {
  return conditions.map((c) => {
    const error = checkMatchConditionExpression(c.expression);
    if (error) return { name: c.name, expression: c.expression, error };
    return { name: c.name, expression: c.expression, program: env.parse(c.expression) as (ctx: Record<string, unknown>) => unknown };
  });
}

/** JSON integers become CEL ints (bigint), as Kubernetes decodes them; other values are kept. */
function toCel(value: unknown): unknown {
  if (typeof value === 'number') return Number.isSafeInteger(value) ? BigInt(value) : value;
  if (Array.isArray(value)) return value.map(toCel);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = toCel(v);
    return out;
  }
  return value;
}

/** The outcome of evaluating a webhook's conditions: matched, skipped (a false condition), or errors. */
export interface MatchOutcome {
  matches: boolean;
  errors: string[];
}

/**
 * Evaluates the conditions as upstream's matchconditions.Matcher: any false
 * skips the webhook (even with errors elsewhere); otherwise any error is
 * returned for the failure policy to decide; otherwise it matches.
 */
export function evaluateMatchConditions(conditions: readonly CompiledCondition[], activation: MatchActivation): MatchOutcome {
  const ctx = {
    object: toCel(activation.object ?? null),
    oldObject: toCel(activation.oldObject ?? null),
    request: toCel(activation.request),
    namespaceObject: null,
  };
  const errors: string[] = [];
  for (const c of conditions) {
    if (!c.program) {
      errors.push(`expression '${c.expression}' resulted in error: ${c.error}`);
      continue;
    }
    try {
      const v = c.program(ctx);
      if (v === false) return { matches: false, errors: [] };
      if (v !== true) errors.push(`expression '${c.expression}' resulted in error: no such overload`);
    } catch (err) {
      errors.push(`expression '${c.expression}' resulted in error: ${firstLine(err instanceof Error ? err.message : String(err))}`);
    }
  }
  return { matches: errors.length === 0, errors };
}
