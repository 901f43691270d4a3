import { type FieldError, fieldErrors } from '@plinth/apimachinery';
import { CelBudget, CelCompileError, type CelProgram, checkCelTyped, compileCel, jsonToCel } from '@plinth/cel';

/** A compiled matchCondition of a webhook authorizer. */
export interface CompiledAuthzCondition {
  expression: string;
  program: CelProgram;
  /** Whether it reads `fieldSelector` / `labelSelector` (the selectors are given to the expression only then, as upstream). */
  usesFieldSelector: boolean;
  usesLabelSelector: boolean;
}

/** Upstream's limit on the conditions of one webhook. */
const MAX_CONDITIONS = 64;

/** `request`, typed as upstream's authorization CEL environment declares it (kubernetes.SubjectAccessReviewSpec). */
const REQUEST_VARS = { request: 'SubjectAccessReviewSpec' };
const REQUEST_TYPES = {
  SelectorRequirement: { key: 'string', operator: 'string', values: 'list<string>' },
  FieldSelectorAttributes: { rawSelector: 'string', requirements: 'list<SelectorRequirement>' },
  LabelSelectorAttributes: { rawSelector: 'string', requirements: 'list<SelectorRequirement>' },
  ResourceAttributes: {
    namespace: 'string',
    verb: 'string',
    group: 'string',
    version: 'string',
    resource: 'string',
    subresource: 'string',
    name: 'string',
    fieldSelector: 'FieldSelectorAttributes',
    labelSelector: 'LabelSelectorAttributes',
  },
  NonResourceAttributes: { path: 'string', verb: 'string' },
  SubjectAccessReviewSpec: {
    resourceAttributes: 'ResourceAttributes',
    nonResourceAttributes: 'NonResourceAttributes',
    user: 'string',
    groups: 'list<string>',
    extra: 'map<string, list<string>>',
    uid: 'string',
  },
};

/** What all the conditions of one webhook may cost on one request together (each also within the per-call limit). */
export const AUTHZ_MATCH_CONDITIONS_BUDGET = 10_000_000;

/** Compiles one expression, or returns upstream's error detail. */
function compileOne(expression: string): CelProgram | string {
  const typed = checkCelTyped(expression, REQUEST_VARS, REQUEST_TYPES);
  if (typed !== undefined) return `compilation failed: ${typed}`;
  let program: CelProgram;
  try {
    program = compileCel(expression, { request: 'dyn' });
  } catch (err) {
    if (err instanceof CelCompileError) return `compilation failed: ${err.message}`;
    throw err;
  }
  if (program.type !== 'bool' && program.type !== 'dyn') return `must evaluate to bool but got ${program.type}`;
  return program;
}

/**
 * Compiles a webhook's `matchConditions` at `at` (`authorizers[i].webhook`)
 * as upstream's compileMatchConditions: at most 64, each a non-empty,
 * unique expression over `request` that type-checks and yields a bool.
 * Pushes field errors (`…matchConditions[0].expression: Invalid value: …`)
 * onto `errors`; returns the conditions that compiled.
 */
export function compileAuthzConditions(conditions: unknown[], at: string, errors: FieldError[]): CompiledAuthzCondition[] {
  if (conditions.length > MAX_CONDITIONS) {
    errors.push(fieldErrors.tooMany(`${at}.matchConditions`, conditions.length, MAX_CONDITIONS));
    return [];
  }
  const seen = new Set<string>();
  const out: CompiledAuthzCondition[] = [];
  conditions.forEach((c, i) => {
    const field = `${at}.matchConditions[${i}].expression`;
    const expression = typeof c === 'object' && c !== null ? (c as { expression?: unknown }).expression : undefined;
    if (typeof expression !== 'string' || expression.trim() === '') return void errors.push(fieldErrors.required(field));
    if (seen.has(expression)) return void errors.push(fieldErrors.duplicate(field, expression));
    seen.add(expression);
    const program = compileOne(expression);
    if (typeof program === 'string') return void errors.push(fieldErrors.invalid(field, expression, program.replace(/\s*\n\s*/g, ' ')));
    out.push({ expression, program, usesFieldSelector: /\bfieldSelector\b/.test(expression), usesLabelSelector: /\blabelSelector\b/.test(expression) });
  });
  return out;
}

/** The outcome of a webhook's conditions on one request. */
export type ConditionsOutcome = { matches: true } | { matches: false } | { error: string };

/**
 * Evaluates the conditions in order as upstream's CELMatcher: the first
 * error ends it with that error (for the failure policy); the first
 * condition that is not true skips the webhook; all true matches. `spec`
 * is the SubjectAccessReview spec the webhook would receive; selectors are
 * shown only to conditions that read them.
 */
export function evaluateAuthzConditions(conditions: readonly CompiledAuthzCondition[], spec: Record<string, unknown>): ConditionsOutcome {
  const budget = new CelBudget(AUTHZ_MATCH_CONDITIONS_BUDGET);
  const full = jsonToCel(activationSpec(spec, true));
  const plain = jsonToCel(activationSpec(spec, false));
  for (const c of conditions) {
    let value: unknown;
    try {
      value = c.program.evaluate({ request: c.usesFieldSelector || c.usesLabelSelector ? full : plain }, budget);
    } catch (err) {
      return { error: `cel evaluation error: expression '${c.expression}' resulted in error: ${(err as Error).message.split('\n')[0]}` };
    }
    if (value !== true) return { matches: false };
  }
  return { matches: true };
}

/** Upstream's convertObjectToUnstructured: every string field present (empty when unset), the selectors only when wanted. */
function activationSpec(spec: Record<string, unknown>, selectors: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = { user: spec.user ?? '', groups: spec.groups ?? [], uid: spec.uid ?? '', extra: spec.extra ?? {} };
  const ra = spec.resourceAttributes as Record<string, unknown> | undefined;
  if (ra) {
    const r: Record<string, unknown> = {};
    for (const k of ['namespace', 'verb', 'group', 'version', 'resource', 'subresource', 'name']) r[k] = ra[k] ?? '';
    if (selectors && ra.fieldSelector) r.fieldSelector = ra.fieldSelector;
    if (selectors && ra.labelSelector) r.labelSelector = ra.labelSelector;
    out.resourceAttributes = r;
  }
  if (spec.nonResourceAttributes) out.nonResourceAttributes = spec.nonResourceAttributes;
  return out;
}
