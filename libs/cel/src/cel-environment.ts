import { LRUCache } from 'lru-cache';
import { Environment } from '@marcbachmann/cel-js';
import { registerHasMacro } from './cel-has.macro.js';
import { registerKubernetesTypesLibrary } from './cel-kubernetes-types.library.js';
import { registerAuthorizerLibrary } from './cel-authorizer.library.js';
import { registerListsLibrary } from './cel-lists.library.js';
import { installMetering, StepLimitReached, type StepMeter, withMeter } from './cel-metering.js';
import { identifiersOf, rewriteMatchesCalls } from './cel-source.js';
import { registerStringsLibrary } from './cel-strings.library.js';

/**
 * The shared CEL environment of Plinth: cel-js (@marcbachmann/cel-js, a
 * maintained, dependency-free CEL implementation) with the Kubernetes
 * libraries real CRDs and admission policies use, RE2 regular expressions,
 * optional types, and a runtime cost limit. Used by CRD validation rules
 * and admission webhooks' matchConditions (and the admission policies to
 * come): call
 * {@link compileCel} once per expression and {@link CelProgram.evaluate}
 * per request.
 */

/** Upstream PerCallLimit: the most cost (here: evaluation steps) one expression may use. */
export const CEL_PER_CALL_LIMIT = 1_000_000;
/** Upstream RuntimeCELCostBudget: the most cost all rules of one object may use together. */
export const CEL_RUNTIME_BUDGET = 10_000_000;
/** Wall-clock bound of one evaluation, a second line of defence besides the step count. */
export const CEL_MAX_EVALUATION_MS = 250;

/** An expression that does not parse or type-check; `message` is cel-style (`ERROR: <input>:1:5: …`). */
export class CelCompileError extends Error {}

/** A runtime error of an expression (no such key, overload, division by zero…). */
export class CelEvaluationError extends Error {}

/** The expression (`call`) or the whole object's rules (`total`) ran out of cost budget. */
export class CelCostLimitError extends CelEvaluationError {
  constructor(readonly scope: 'call' | 'total') {
    super('operation cancelled: actual cost limit exceeded');
  }
}

/**
 * What several evaluations (e.g. all rules of one object) may spend
 * together: cost, and wall-clock time from the budget's creation (so one
 * write spends at most CEL_MAX_EVALUATION_MS in CEL, however many rules).
 */
export class CelBudget {
  readonly deadline: number;
  constructor(
    public remaining: number = CEL_RUNTIME_BUDGET,
    maxMs: number = CEL_MAX_EVALUATION_MS,
  ) {
    this.deadline = performance.now() + maxMs;
  }
}

/** A compiled expression. Thread-safe (evaluation is synchronous). */
export interface CelProgram {
  readonly expression: string;
  /** The parsed expression (cel-js AST), for static analysis such as cost estimation. */
  readonly ast: unknown;
  /** The checked result type as cel-js names it (`bool`, `int`, `string`, `list`, `map`, `dyn`, …). */
  readonly type: string;
  /** True when the expression reads variable `name` (e.g. `oldSelf` makes a transition rule). */
  uses(name: string): boolean;
  /**
   * Evaluates with `activation` (variable values as CEL values: see
   * cel-values.ts). Throws CelEvaluationError, or CelCostLimitError when
   * the per-call limit or `budget` runs out; charges `budget`.
   */
  evaluate(activation: Record<string, unknown>, budget?: CelBudget): unknown;
}

/** A variable declaration: name → CEL type (`dyn` for schema-typed JSON values). */
export type CelVariables = Record<string, string>;

/** Environments by variable declarations (a handful in practice; bounded all the same). */
const environments = new LRUCache<string, { env: Environment; metered: boolean }>({ max: 64 });

function buildEnvironment(vars: CelVariables, homogeneous = true): { env: Environment; metered: boolean } {
  const env = new Environment({ enableOptionalTypes: true, homogeneousAggregateLiterals: homogeneous, unlistedVariablesAreDyn: false });
  registerHasMacro(env);
  registerStringsLibrary(env);
  registerListsLibrary(env);
  registerKubernetesTypesLibrary(env);
  registerAuthorizerLibrary(env);
  for (const [name, type] of Object.entries(vars)) env.registerVariable(name, type);
  const metered = installMetering(env);
  return { env, metered };
}

function environmentFor(vars: CelVariables, homogeneous = true): { env: Environment; metered: boolean } {
  const key = `${homogeneous}${JSON.stringify(Object.entries(vars).sort(([a], [b]) => (a < b ? -1 : 1)))}`;
  let hit = environments.get(key);
  if (!hit) {
    hit = buildEnvironment(vars, homogeneous);
    environments.set(key, hit);
  }
  return hit;
}

/** A heterogeneous list or map literal error where one side is (or contains) dyn: not an error in cel-go. */
function isDynLiteralMismatch(err: unknown): boolean {
  const m = /(?:uses wrong type|must have the same type), expected type '([^']*)' but found '([^']*)'/.exec(String((err as { message?: string })?.message ?? ''));
  return m !== null && (/\bdyn\b/.test(m[1]) || /\bdyn\b/.test(m[2]));
}

function positionOf(src: string, pos: number | undefined): string {
  if (pos === undefined) return '';
  const before = src.slice(0, pos);
  const line = before.split('\n').length;
  const col = pos - before.lastIndexOf('\n');
  return `<input>:${line}:${col}: `;
}

/** cel-go's form of a compile error: `ERROR: <input>:L:C: [Syntax error: ]first line of the message`. */
function compileMessage(src: string, err: unknown): string {
  const e = err as { name?: string; summary?: string; message?: string; range?: { start: number } };
  const raw = (e.summary ?? e.message ?? String(err)).split('\n')[0].trim();
  const text = raw.replace(/__re2__/g, 'matches').replace(/\bh_s\b/g, 'has');
  const kind = e.name === 'ParseError' ? 'Syntax error: ' : '';
  return `ERROR: ${positionOf(src, e.range?.start)}${kind}${text.charAt(0).toLowerCase()}${text.slice(1)}`;
}

/**
 * Compiles `expression` for variables `vars` (cached environment per
 * variable set). Throws CelCompileError for syntax and type errors.
 */
export function compileCel(expression: string, vars: CelVariables): CelProgram {
  const { env } = environmentFor(vars);
  let { metered } = environmentFor(vars);
  const src = rewriteMatchesCalls(expression);
  let fn: ((ctx: Record<string, unknown>) => unknown) & { ast?: unknown; check?: () => { valid: boolean; type?: string; error?: unknown } };
  try {
    fn = env.parse(src) as typeof fn;
  } catch (err) {
    throw new CelCompileError(compileMessage(expression, err));
  }
  let checked = fn.check?.();
  if (checked && !checked.valid && isDynLiteralMismatch(checked.error)) {
    // cel-go's homogeneous literals accept dyn beside any type (dyn is assignable to every
    // type); cel-js's do not, so such literals are checked again with dyn unification.
    const lenient = environmentFor(vars, false);
    fn = lenient.env.parse(src) as typeof fn;
    metered = lenient.metered;
    checked = fn.check?.();
  }
  if (checked && !checked.valid) throw new CelCompileError(compileMessage(expression, checked.error));
  const ids = identifiersOf(fn.ast);
  return {
    expression,
    ast: fn.ast,
    type: checked?.type ?? 'dyn',
    uses: (name) => ids.has(name),
    evaluate: (activation, budget) => evaluateCompiled(fn, activation, budget, metered),
  };
}

/** Object types for {@link checkCelTyped}: type name → field name → CEL type (`string`, `list<T>`, `map<string, T>`, another type name, `dyn`). */
export type CelObjectTypes = Record<string, Record<string, string>>;

/** Typed checking environments by declarations (per policy write; bounded). */
const typedEnvironments = new LRUCache<string, Environment>({ max: 32 });

/**
 * Type-checks `expression` with typed variables (e.g. `object` declared as
 * a kind's schema), as upstream's policy type checking does. Returns
 * undefined when it checks, else a cel-go style error
 * (`ERROR: <input>:1:17: undefined field 'x'`). Never throws; never evaluates.
 * `types` must list referenced types before the types that use them.
 */
export function checkCelTyped(expression: string, vars: CelVariables, types: CelObjectTypes): string | undefined {
  const key = JSON.stringify([vars, types]);
  let env = typedEnvironments.get(key);
  try {
    if (!env) {
      env = new Environment({ enableOptionalTypes: true, homogeneousAggregateLiterals: false, unlistedVariablesAreDyn: false });
      registerHasMacro(env);
      registerStringsLibrary(env);
      registerListsLibrary(env);
      registerKubernetesTypesLibrary(env);
      registerAuthorizerLibrary(env);
      for (const [name, fields] of Object.entries(types)) env.registerType(name, { fields });
      for (const [name, type] of Object.entries(vars)) env.registerVariable(name, type);
      typedEnvironments.set(key, env);
    }
    const checked = env.check(rewriteMatchesCalls(expression)) as { valid: boolean; error?: unknown };
    if (checked.valid) return undefined;
    return compileMessage(expression, checked.error).replace(/no such key: (\S+)$/i, "undefined field '$1'");
  } catch (err) {
    return compileMessage(expression, err);
  }
}

function evaluateCompiled(
  fn: (ctx: Record<string, unknown>) => unknown,
  activation: Record<string, unknown>,
  budget: CelBudget | undefined,
  metered: boolean,
): unknown {
  const allowed = Math.min(CEL_PER_CALL_LIMIT, budget ? budget.remaining : CEL_PER_CALL_LIMIT);
  const ownDeadline = performance.now() + CEL_MAX_EVALUATION_MS;
  const meter: StepMeter = { left: allowed, deadline: budget ? Math.min(ownDeadline, budget.deadline) : ownDeadline, exceeded: false };
  let result: unknown;
  let failure: unknown;
  try {
    result = metered ? withMeter(meter, () => fn(activation)) : fn(activation);
  } catch (err) {
    failure = err;
  } finally {
    if (budget) budget.remaining -= allowed - Math.max(meter.left, 0);
  }
  if (meter.exceeded || failure instanceof StepLimitReached) {
    // Running out of time is reported as the call's limit (upstream has no clock; the rule at hand is the one to blame).
    throw new CelCostLimitError(budget && budget.remaining <= 0 && allowed < CEL_PER_CALL_LIMIT ? 'total' : 'call');
  }
  if (failure !== undefined) {
    const e = failure as { summary?: string; message?: string };
    // cel-go's wording for the commonest runtime error, which clients match on.
    const text = (e.summary ?? e.message ?? String(failure)).replace(/__re2__/g, 'matches').replace(/^No such key: /, 'no such key: ');
    throw new CelEvaluationError(text);
  }
  if (result instanceof Promise) throw new CelEvaluationError('asynchronous functions are not supported');
  return result;
}
