import { CEL_MAX_REQUEST_BYTES, compileCel, estimateCelCost, type SizeBound, UNBOUNDED } from '@plinth/cel';
import { type FieldError, fieldErrors } from '@plinth/apimachinery';
import type { StructuralSchema } from '@plinth/apimachinery';
import type { RuleNode, ValidationRule } from './cel-rules.js';

/**
 * CEL cost limits at CRD creation, as apiextensions-apiserver applies them:
 * each rule's (and messageExpression's) estimated cost must stay within
 * StaticEstimatedCostLimit, and the sum over the whole schema, each rule
 * counted as many times as it can run per object (the product of maxItems
 * and maxProperties above it), within StaticEstimatedCRDCostLimit. Bounds
 * come from maxItems, maxLength and maxProperties; without them a value is
 * as large as a 3 MiB request allows. Pure.
 */

/** Upstream StaticEstimatedCostLimit: the most one rule may be estimated to cost. */
export const STATIC_ESTIMATED_COST_LIMIT = 10_000_000;
/** Upstream StaticEstimatedCRDCostLimit: the most all rules of a CRD version may cost together. */
export const STATIC_ESTIMATED_CRD_COST_LIMIT = 100_000_000;

const VARS = { self: 'dyn', oldSelf: 'dyn' };
// Longest JSON text of the string formats whose size is known (upstream's celconfig sizes).
const FORMAT_LENGTHS: Record<string, number> = { date: 10, 'date-time': 35, duration: 36, uuid: 36 };

/** The smallest JSON text a value of `s` can have (upstream estimateMinSizeJSON). */
function minJsonSize(s: StructuralSchema | undefined): number {
  switch (s?.type) {
    case 'boolean':
      return 4;
    case 'number':
    case 'integer':
      return 1;
    case 'string':
    case 'array':
      return 2;
    case 'object': {
      let size = 2;
      for (const k of s.required ?? []) size += k.length + 4 + minJsonSize(s.properties?.[k]);
      return size;
    }
    default:
      return 1;
  }
}

/** The most entries a list or map of `s` may have in one request. */
export function maxEntries(s: StructuralSchema): number {
  if (s.type === 'array') return s.maxItems ?? Math.floor((CEL_MAX_REQUEST_BYTES - 2) / (minJsonSize(s.items) + 1));
  const value = typeof s.additionalProperties === 'object' ? s.additionalProperties : undefined;
  return s.maxProperties ?? Math.floor((CEL_MAX_REQUEST_BYTES - 2) / (minJsonSize(value) + 4));
}

/** The largest shape a value of `s` may have, for cost estimation. */
export function sizeBoundOf(s: StructuralSchema | undefined, depth = 0): SizeBound {
  if (!s || depth > 32) return UNBOUNDED;
  if (s['x-kubernetes-int-or-string']) return { kind: 'string', max: s.maxLength ?? CEL_MAX_REQUEST_BYTES - 2 };
  switch (s.type) {
    case 'string':
      return { kind: 'string', max: s.maxLength ?? FORMAT_LENGTHS[s.format ?? ''] ?? CEL_MAX_REQUEST_BYTES - 2 };
    case 'array':
      return { kind: 'list', max: maxEntries(s), elem: sizeBoundOf(s.items, depth + 1) };
    case 'object': {
      if (typeof s.additionalProperties === 'object') return { kind: 'map', max: maxEntries(s), elem: sizeBoundOf(s.additionalProperties, depth + 1) };
      const fields = new Map(Object.entries(s.properties ?? {}).map(([k, v]) => [k, sizeBoundOf(v, depth + 1)]));
      if (fields.size === 0 || s['x-kubernetes-preserve-unknown-fields']) return { kind: 'dyn', max: CEL_MAX_REQUEST_BYTES, fields };
      return { kind: 'map', max: fields.size, fields };
    }
    case undefined:
      return UNBOUNDED;
    default:
      return { kind: 'scalar', max: 1 };
  }
}

/** `estimated rule cost exceeds budget by factor of 2.5x (…)`, upstream's wording and rounding. */
export function costErrorMessage(what: string, cost: number, limit: number): string {
  const factor = cost / limit;
  const text = factor > 100 ? 'more than 100x' : factor < 1.5 ? `${factor.toFixed(6)}x` : `${factor.toFixed(1)}x`;
  return `${what} exceeds budget by factor of ${text} (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)`;
}

/** Sums the cost of every rule of one schema, remembering who contributed. */
export class CelCostTotal {
  total = 0;
  readonly contributions: Array<{ path: string; cost: number }> = [];

  observe(path: string, cost: number): void {
    this.total = Math.min(Number.MAX_SAFE_INTEGER, this.total + cost);
    this.contributions.push({ path, cost });
  }

  /** The errors when the total is over the CRD limit: the schema's, then its costliest contributors'. */
  errors(schemaPath: string): FieldError[] {
    if (this.total <= STATIC_ESTIMATED_CRD_COST_LIMIT) return [];
    const out = [fieldErrors.forbidden(schemaPath, costErrorMessage('x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema', this.total, STATIC_ESTIMATED_CRD_COST_LIMIT))];
    const costliest = [...this.contributions].sort((a, b) => b.cost - a.cost);
    let covered = 0;
    for (const c of costliest) {
      out.push(fieldErrors.forbidden(c.path, 'contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema'));
      covered += c.cost;
      if (this.total - covered <= STATIC_ESTIMATED_CRD_COST_LIMIT) break;
    }
    return out;
  }
}

/**
 * The cost errors of the rules at one schema node `s` (at `path`), which
 * may run `cardinality` times per object; adds their costs to `total`.
 * Rules that do not compile are skipped (their compile errors are reported
 * elsewhere).
 */
export function ruleCostErrors(rules: ValidationRule[], s: StructuralSchema, path: string, cardinality: number, total: CelCostTotal): FieldError[] {
  const errs: FieldError[] = [];
  const self = sizeBoundOf(s);
  rules.forEach((r, i) => {
    const rp = `${path}.x-kubernetes-validations[${i}]`;
    for (const [field, expr] of [['rule', r.rule], ['messageExpression', r.messageExpression]] as const) {
      if (!expr || !expr.trim()) continue;
      let cost: number;
      try {
        cost = estimateCelCost(compileCel(expr, VARS).ast, { self, oldSelf: self });
      } catch {
        continue;
      }
      if (cost > STATIC_ESTIMATED_COST_LIMIT) errs.push(fieldErrors.forbidden(`${rp}.${field}`, costErrorMessage(`estimated ${field === 'rule' ? 'rule' : 'messageExpression'} cost`, cost, STATIC_ESTIMATED_COST_LIMIT)));
      total.observe(`${rp}.${field}`, Math.min(Number.MAX_SAFE_INTEGER, cost * cardinality));
    }
  });
  return errs;
}

/**
 * The estimated worst-case cost of evaluating every rule of a compiled
 * tree on one object: each rule (and messageExpression) as often as it can
 * run (the product of the list and map sizes above it). What the CEL
 * worker pool uses to let trivial rules run inline.
 */
export function estimatedRulesCost(node: RuleNode | undefined, cardinality = 1): number {
  if (!node) return 0;
  const self = sizeBoundOf(node.schema);
  let total = 0;
  for (const r of node.rules) {
    for (const p of [r.program, r.message]) {
      if (p) total = Math.min(Number.MAX_SAFE_INTEGER, total + estimateCelCost(p.ast, { self, oldSelf: self }) * cardinality);
    }
  }
  for (const child of node.properties.values()) total = Math.min(Number.MAX_SAFE_INTEGER, total + estimatedRulesCost(child, cardinality));
  const below = Math.min(Number.MAX_SAFE_INTEGER, cardinality * maxEntries(node.schema));
  total = Math.min(Number.MAX_SAFE_INTEGER, total + estimatedRulesCost(node.additional, below) + estimatedRulesCost(node.items, below));
  return total;
}
