import { isDeepStrictEqual } from 'node:util';
import { Optional } from '@marcbachmann/cel-js';
import {
  CelBudget,
  CelCompileError,
  CelCostLimitError,
  CelEvaluationError,
  type CelProgram,
  compileCel,
} from '@plinth/cel';
import { type FieldError, fieldErrors } from '@plinth/apimachinery';
import { isPlainObject } from '@plinth/apimachinery';
import type { StructuralSchema } from '@plinth/apimachinery';
import { CelValueConverter } from './cel-schema-values.js';

/**
 * x-kubernetes-validations: every rule of a schema compiled once (per CRD
 * version, when the CRD is loaded), then evaluated against each object
 * with `self` (and `oldSelf` for transition rules) bound to the value at
 * the rule's schema node, as apiextensions-apiserver's cel.Validator does,
 * with its error texts: `<path>: Invalid value: "<type>": <message>`.
 */

/** A validation rule as written in the schema. */
export interface ValidationRule {
  rule: string;
  message?: string;
  messageExpression?: string;
  reason?: string;
  fieldPath?: string;
  optionalOldSelf?: boolean;
}

/** A rule compiled for evaluation. */
interface CompiledRule {
  rule: ValidationRule;
  program?: CelProgram;
  message?: CelProgram;
  compileError?: string;
  messageError?: string;
  usesOldSelf: boolean;
}

/** The compiled rules of one schema node and of the nodes below it. */
export interface RuleNode {
  schema: StructuralSchema;
  rules: CompiledRule[];
  properties: Map<string, RuleNode>;
  additional?: RuleNode;
  items?: RuleNode;
}

const VARS = { self: 'dyn', oldSelf: 'dyn' };
const MAX_MESSAGE_BYTES = 5 * 1024;

function compileRule(rule: ValidationRule): CompiledRule {
  const out: CompiledRule = { rule, usesOldSelf: false };
  try {
    out.program = compileCel(rule.rule ?? '', VARS);
    out.usesOldSelf = out.program.uses('oldSelf');
  } catch (err) {
    out.compileError = err instanceof CelCompileError ? `compilation failed: ${err.message}` : String(err);
  }
  if (rule.messageExpression) {
    try {
      out.message = compileCel(rule.messageExpression, VARS);
    } catch (err) {
      out.messageError = err instanceof CelCompileError ? `messageExpression compilation failed: ${err.message}` : String(err);
    }
  }
  return out;
}

/**
 * Compiles every rule under `schema`; undefined when there are none. The
 * result is immutable and shared by all requests.
 */
export function compileRules(schema: StructuralSchema | undefined, seen = new Set<StructuralSchema>()): RuleNode | undefined {
  if (!schema || seen.has(schema)) return undefined;
  seen.add(schema);
  const node: RuleNode = { schema, rules: (schema['x-kubernetes-validations'] ?? []).map(compileRule), properties: new Map() };
  for (const [k, p] of Object.entries(schema.properties ?? {})) {
    const child = compileRules(p, seen);
    if (child) node.properties.set(k, child);
  }
  if (typeof schema.additionalProperties === 'object') node.additional = compileRules(schema.additionalProperties, seen);
  node.items = compileRules(schema.items, seen);
  seen.delete(schema);
  const empty = node.rules.length === 0 && node.properties.size === 0 && !node.additional && !node.items;
  return empty ? undefined : node;
}

/** Compile errors of the rules at one node, for CRD validation (index → error). */
export function ruleCompileErrors(rules: ValidationRule[]): Array<{ index: number; field: 'rule' | 'messageExpression'; detail: string; usesOldSelf: boolean }> {
  const out: Array<{ index: number; field: 'rule' | 'messageExpression'; detail: string; usesOldSelf: boolean }> = [];
  rules.forEach((r, index) => {
    const c = compileRule(r);
    if (c.compileError) out.push({ index, field: 'rule', detail: c.compileError, usesOldSelf: false });
    if (c.messageError) out.push({ index, field: 'messageExpression', detail: c.messageError, usesOldSelf: c.usesOldSelf });
    if (!c.compileError && !c.messageError) out.push({ index, field: 'rule', detail: '', usesOldSelf: c.usesOldSelf });
  });
  return out;
}

class StopValidation extends Error {}

function child(path: string, name: string): string {
  return path === '<nil>' ? name : `${path}.${name}`;
}

/** Evaluates a compiled rule tree against one object (and its old version on updates). */
class RuleRunner {
  readonly errs: FieldError[] = [];
  private readonly budget = new CelBudget();
  private readonly conv = new CelValueConverter();

  run(node: RuleNode, v: unknown, old: unknown, path: string, resource: boolean): void {
    if (v === null || v === undefined) return;
    if (node.rules.length > 0) this.evaluateRules(node, v, old, path, resource);
    if (isPlainObject(v)) {
      for (const [k, x] of Object.entries(v)) {
        const prop = node.properties.get(k);
        const oldChild = isPlainObject(old) ? old[k] : undefined;
        if (prop) this.run(prop, x, oldChild, child(path, k), prop.schema['x-kubernetes-embedded-resource'] === true);
        else if (node.additional && !(node.schema.properties && Object.hasOwn(node.schema.properties, k))) {
          const correlated = node.schema['x-kubernetes-map-type'] === 'atomic' ? undefined : oldChild;
          this.run(node.additional, x, correlated, `${path === '<nil>' ? '' : path}[${k}]`, false);
        }
      }
    } else if (Array.isArray(v) && node.items) {
      const oldItems = this.correlateItems(node.schema, v, old);
      v.forEach((x, i) => this.run(node.items!, x, oldItems[i], `${path === '<nil>' ? '' : path}[${i}]`, false));
    }
  }

  private correlateItems(s: StructuralSchema, v: unknown[], old: unknown): unknown[] {
    if (s['x-kubernetes-list-type'] !== 'map' || !Array.isArray(old)) return [];
    const keys = s['x-kubernetes-list-map-keys'] ?? [];
    const keyOf = (x: unknown) => (isPlainObject(x) ? JSON.stringify(keys.map((k) => x[k])) : '');
    const byKey = new Map(old.map((x) => [keyOf(x), x]));
    return v.map((x) => byKey.get(keyOf(x)));
  }

  private evaluateRules(node: RuleNode, v: unknown, old: unknown, path: string, resource: boolean): void {
    const self = this.conv.convert(v, node.schema, resource);
    const oldSelf = old === undefined || old === null ? undefined : this.conv.convert(old, node.schema, resource);
    const type = node.schema.type ?? '';
    for (const r of node.rules) {
      if (r.compileError || !r.program) {
        this.errs.push(fieldErrors.invalid(path, type, `rule compile error: ${r.compileError}`));
        continue;
      }
      const optional = r.rule.optionalOldSelf === true;
      if (r.usesOldSelf && oldSelf === undefined && !optional) continue;
      const activation = { self, oldSelf: optional ? (oldSelf === undefined ? Optional.none() : Optional.of(oldSelf)) : oldSelf ?? null };
      let result: unknown;
      try {
        result = r.program.evaluate(activation, this.budget);
      } catch (err) {
        this.evaluationFailed(err, r, path, type);
        continue;
      }
      // Ratcheting: a non-transition rule failing on a value the update did not change is not an error.
      if (result !== true && !(old !== undefined && !r.usesOldSelf && isDeepStrictEqual(v, old))) this.ruleFailed(r, activation, path, type);
    }
  }

  private evaluationFailed(err: unknown, r: CompiledRule, path: string, type: string): void {
    const ruleText = (r.rule.message ?? '').trim() || r.rule.rule.trim();
    if (err instanceof CelCostLimitError) {
      this.errs.push(
        fieldErrors.invalid(
          path,
          type,
          err.scope === 'total'
            ? 'validation failed due to running out of cost budget, no further validation rules will be run'
            : `'operation cancelled: actual cost limit exceeded': no further validation rules will be run due to call cost exceeds limit for rule: ${ruleText}`,
        ),
      );
      throw new StopValidation();
    }
    const msg = err instanceof CelEvaluationError ? err.message : String(err);
    if (/no matching overload|no such overload/i.test(msg)) {
      this.errs.push(fieldErrors.invalid(path, type, `'${msg}': call arguments did not match a supported operator, function or macro signature for rule: ${ruleText}`));
    } else {
      this.errs.push(fieldErrors.invalid(path, type, `${msg} evaluating rule: ${ruleText}`));
    }
  }

  private ruleFailed(r: CompiledRule, activation: Record<string, unknown>, path: string, type: string): void {
    const at = r.rule.fieldPath ? normalizeFieldPath(path, r.rule.fieldPath) : path;
    let detail = (r.rule.message ?? '').trim() || `failed rule: ${r.rule.rule.trim()}`;
    if (r.message) {
      try {
        const m = r.message.evaluate(activation, this.budget);
        const text = typeof m === 'string' ? m.trim() : '';
        if (text && !/\n/.test(text) && Buffer.byteLength(text) <= MAX_MESSAGE_BYTES) detail = text;
      } catch (err) {
        if (err instanceof CelCostLimitError) {
          this.errs.push(fieldErrors.invalid(at, type, 'messageExpression evaluation failed due to running out of cost budget, no further validation rules will be run'));
          throw new StopValidation();
        }
      }
    }
    switch (r.rule.reason) {
      case 'FieldValueForbidden':
        this.errs.push(fieldErrors.forbidden(at, detail));
        break;
      case 'FieldValueRequired':
        this.errs.push(fieldErrors.required(at, detail));
        break;
      case 'FieldValueDuplicate':
        this.errs.push(fieldErrors.duplicate(at, type));
        break;
      default:
        this.errs.push(fieldErrors.invalid(at, type, detail));
    }
  }
}

/** `.spec.x` or `.a['b']` relative to the rule's node, as a field path. */
function normalizeFieldPath(base: string, fieldPath: string): string {
  const rel = fieldPath
    .trim()
    .replace(/\[['"]([^'"]*)['"]\]/g, '.$1')
    .replace(/^\./, '');
  return base === '<nil>' ? rel : `${base}.${rel}`;
}

/**
 * The rule violations of `obj` (an update when `old` is given; transition
 * rules only run then). Paths are upstream's: `<nil>` for the root,
 * `spec.items[0]`, `spec.map[key]`.
 */
export function validateRules(tree: RuleNode | undefined, obj: unknown, old?: unknown): FieldError[] {
  if (!tree) return [];
  const runner = new RuleRunner();
  try {
    runner.run(tree, obj, old, '<nil>', true);
  } catch (err) {
    if (!(err instanceof StopValidation)) throw err;
  }
  return runner.errs;
}
