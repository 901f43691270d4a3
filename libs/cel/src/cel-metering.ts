import type { Environment } from '@marcbachmann/cel-js';

/**
 * Runtime cost limiting for cel-js. CEL has no loops, but comprehensions
 * nest (`l.all(x, l.all(y, …))`) and a rule over a large list can still
 * burn seconds. cel-js evaluates every AST node through its evaluator's
 * `run` method, so counting those calls is an exact step counter: each
 * environment's evaluator gets an own `run` that decrements the active
 * meter and aborts when it is spent or the wall-clock deadline passed.
 * Evaluation is synchronous, so one module-level meter is enough.
 */

/** The budget of the evaluation in progress. */
export interface StepMeter {
  left: number;
  deadline: number;
  exceeded: boolean;
}

/** Thrown from inside cel-js when the active meter runs out; mapped by the caller. */
export class StepLimitReached extends Error {}

let active: StepMeter | null = null;
const TIME_CHECK_MASK = 1023;

/** Runs `fn` under `meter`; restores the previous meter afterwards. */
export function withMeter<T>(meter: StepMeter, fn: () => T): T {
  const prev = active;
  active = meter;
  try {
    return fn();
  } finally {
    active = prev;
  }
}

/**
 * Charges `units` beyond the step count to the evaluation in progress
 * (functions with a fixed upstream cost, such as an authorization check);
 * throws StepLimitReached when that spends the meter. Nothing happens
 * outside a metered evaluation.
 */
export function chargeCost(units: number): void {
  const m = active;
  if (m === null) return;
  m.left -= units;
  if (m.left < 0) {
    m.exceeded = true;
    throw new StepLimitReached('operation cancelled: actual cost limit exceeded');
  }
}

interface PatchableEvaluator {
  run: (ast: { evaluate: (ev: unknown, ast: unknown, ctx: unknown) => unknown }, ctx: unknown) => unknown;
}

function meteredRun(this: PatchableEvaluator, ast: { evaluate: (ev: unknown, ast: unknown, ctx: unknown) => unknown }, ctx: unknown): unknown {
  const m = active;
  if (m !== null) {
    m.left--;
    if (m.left < 0 || ((m.left & TIME_CHECK_MASK) === 0 && performance.now() > m.deadline)) {
      m.exceeded = true;
      throw new StepLimitReached('operation cancelled: actual cost limit exceeded');
    }
  }
  return ast.evaluate(this, ast, ctx);
}

const PROBE = '__plinth_meter_probe__';

/**
 * Installs the step counter on `env`'s evaluator (registers a probe macro
 * that hands the evaluator over). Must run before the environment is used
 * or cloned. Returns false when cel-js does not allow it (then evaluation
 * is unmetered).
 */
export function installMetering(env: Environment): boolean {
  let evaluator: PatchableEvaluator | undefined;
  env.registerFunction(`${PROBE}(ast): bool`, (() => ({
    typeCheck: (checker: { getType(t: string): unknown }) => checker.getType('bool'),
    evaluate: (ev: PatchableEvaluator) => {
      evaluator = ev;
      return true;
    },
  })) as never);
  try {
    env.evaluate(`${PROBE}(0)`, {});
    if (!evaluator || Object.isFrozen(evaluator) || typeof evaluator.run !== 'function') return false;
    evaluator.run = meteredRun;
    return true;
  } catch {
    return false;
  }
}
