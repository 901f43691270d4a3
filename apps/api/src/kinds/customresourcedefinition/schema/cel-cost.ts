import { CEL_MAX_REQUEST_BYTES, compileCel, type DeclType, estimateCelCost, multiplySaturating, addSaturating } from '@plinth/cel';
import { type FieldError, fieldErrors } from '@plinth/apimachinery';
import type { StructuralSchema } from '@plinth/apimachinery';
import { schemaDeclType } from './cel-decl-type.js';
import type { RuleNode, ValidationRule } from './cel-rules.js';

/**
 * CEL cost limits at CRD creation, as apiextensions-apiserver applies them
 * (validation.go, cel_validation.go): a rule's cost is its estimated
 * worst-case cost (see estimateCelCost) times the number of times it can
 * run per object. That number is the product of the maxItems and
 * maxProperties of the lists and maps above the rule; when one of them is
 * unbounded, it is instead how many copies of the rule's node, at its
 * smallest JSON size plus a comma, fit in a 3 MiB request. Each rule must
 * stay within StaticEstimatedCostLimit; a messageExpression within it too,
 * uncounted; and all of a schema's rules and messageExpressions together
 * within StaticEstimatedCRDCostLimit. Pure.
 */

/** Upstream StaticEstimatedCostLimit: the most one rule may be estimated to cost. */
export const STATIC_ESTIMATED_COST_LIMIT = 10_000_000;
/** Upstream StaticEstimatedCRDCostLimit: the most all rules of a CRD version may cost together. */
export const STATIC_ESTIMATED_CRD_COST_LIMIT = 100_000_000;

const VARS = { self: 'dyn', oldSelf: 'dyn' };

/**
 * How many more times the children of `s` occur than `s` does (upstream
 * extractMaxElements): maxItems or maxProperties for lists and maps,
 * undefined when they are unbounded, 1 otherwise.
 */
export function childCardinality(s: StructuralSchema): number | undefined {
  if (s.type === 'object') {
    if (s.additionalProperties === undefined) return 1;
    return s.maxProperties !== undefined ? Math.max(0, s.maxProperties) : undefined;
  }
  if (s.type === 'array') return s.maxItems !== undefined ? Math.max(0, s.maxItems) : undefined;
  return 1;
}

/** How many values of at least `minSize` JSON bytes (plus a comma) fit in a request (upstream maxCardinality). */
export function maxCardinality(minSize: number): number {
  return Math.floor(CEL_MAX_REQUEST_BYTES / (minSize + 1));
}

/** A rule's cost times how often it can run: `cardinality`, or when unbounded the most copies of its node a request can hold. */
export function expressionCost(cost: number, cardinality: number | undefined, decl: DeclType): number {
  return multiplySaturating(cost, cardinality ?? maxCardinality(decl.minSerializedSize));
}

/** `estimated rule cost exceeds budget by factor of 2.5x (…)`, upstream's wording and rounding. */
export function costErrorMessage(what: string, cost: number, limit: number): string {
  const factor = cost / limit;
  const text = factor > 100 ? 'more than 100x' : factor < 1.5 ? `${factor.toFixed(6)}x` : `${factor.toFixed(1)}x`;
  return `${what} exceeds budget by factor of ${text} (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)`;
}

/** The sum of every rule's cost over one schema, and the (at most four) costliest rules of at least 1% of the limit. */
export class CelCostTotal {
  total = 0;
  readonly mostExpensive: Array<{ path: string; cost: number }> = [];

  /** Adds one rule's cost (upstream ObserveExpressionCost). Mutates this. */
  observe(path: string, cost: number): void {
    this.total = addSaturating(this.total, cost);
    if (cost < STATIC_ESTIMATED_CRD_COST_LIMIT / 100) return;
    this.mostExpensive.push({ path, cost });
    this.mostExpensive.sort((a, b) => b.cost - a.cost);
    if (this.mostExpensive.length > 4) this.mostExpensive.length = 4;
  }

  /** The errors when the total is over the CRD limit: one per costliest rule, then the schema's. */
  errors(schemaPath: string): FieldError[] {
    if (this.total <= STATIC_ESTIMATED_CRD_COST_LIMIT) return [];
    const out = this.mostExpensive.map((c) => fieldErrors.forbidden(c.path, 'contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema'));
    out.push(fieldErrors.forbidden(schemaPath, costErrorMessage('x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema', this.total, STATIC_ESTIMATED_CRD_COST_LIMIT)));
    return out;
  }
}

function estimate(expr: string, decl: DeclType): number | undefined {
  try {
    return estimateCelCost(compileCel(expr, VARS).ast, decl);
  } catch {
    return undefined;
  }
}

/**
 * The cost errors of the rules at schema node `s` (at `path`), which may
 * run `cardinality` times per object (undefined: unbounded); `resourceRoot`
 * for the schema's root or an embedded resource. Adds their costs to
 * `total` (mutates it). Rules that do not compile are skipped (their
 * compile errors are reported elsewhere).
 */
export function ruleCostErrors(rules: ValidationRule[], s: StructuralSchema, path: string, cardinality: number | undefined, total: CelCostTotal, resourceRoot: boolean): FieldError[] {
  const errs: FieldError[] = [];
  const decl = schemaDeclType(s, resourceRoot);
  if (!decl) return errs;
  rules.forEach((r, i) => {
    const rp = `${path}.x-kubernetes-validations[${i}]`;
    if (!r.rule || !r.rule.trim()) return;
    const ruleCost = estimate(r.rule, decl);
    if (ruleCost === undefined) return;
    const cost = expressionCost(ruleCost, cardinality, decl);
    if (cost > STATIC_ESTIMATED_COST_LIMIT) errs.push(fieldErrors.forbidden(`${rp}.rule`, costErrorMessage('estimated rule cost', cost, STATIC_ESTIMATED_COST_LIMIT)));
    total.observe(`${rp}.rule`, cost);
    const messageCost = r.messageExpression ? estimate(r.messageExpression, decl) : undefined;
    if (messageCost === undefined) return;
    if (messageCost > STATIC_ESTIMATED_COST_LIMIT) {
      errs.push(fieldErrors.forbidden(`${rp}.messageExpression`, costErrorMessage('estimated messageExpression cost', messageCost, STATIC_ESTIMATED_COST_LIMIT)));
    }
    total.observe(`${rp}.messageExpression`, messageCost);
  });
  return errs;
}

/**
 * The estimated worst-case cost of evaluating every rule of a compiled
 * tree on one object, each rule (and messageExpression) counted as often
 * as it can run. What the CEL worker pool uses to let trivial rules run
 * inline.
 */
export function estimatedRulesCost(node: RuleNode | undefined, cardinality: number | undefined = 1, resourceRoot = true): number {
  if (!node) return 0;
  let total = 0;
  const decl = node.rules.length > 0 ? schemaDeclType(node.schema, resourceRoot || node.schema['x-kubernetes-embedded-resource'] === true) : undefined;
  if (decl) {
    for (const r of node.rules) {
      for (const p of [r.program, r.message]) if (p) total = addSaturating(total, expressionCost(estimateCelCost(p.ast, decl), cardinality, decl));
    }
  }
  for (const child of node.properties.values()) total = addSaturating(total, estimatedRulesCost(child, cardinality, false));
  const per = childCardinality(node.schema);
  const below = cardinality === undefined || per === undefined ? undefined : multiplySaturating(cardinality, per);
  total = addSaturating(total, addSaturating(estimatedRulesCost(node.additional, below, false), estimatedRulesCost(node.items, below, false)));
  return total;
}
