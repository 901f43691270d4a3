import { type StrictIssue, strictDecodingMessage } from '@plinth/apimachinery';
import { pruneUnknownFields } from '@plinth/apimachinery';
import { ApiError } from '@plinth/apimachinery';
import { createHash } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import type { FieldError } from '@plinth/apimachinery';
import type { KubeObject } from '@plinth/apimachinery';
import type { CelRulesJob } from '../registry/resource-definition.js';
import { objectMetaSchema } from '../schema/object-meta.schema.js';
import type { StructuralSchema } from '@plinth/apimachinery';
import { estimatedRulesCost } from '../kinds/customresourcedefinition/schema/cel-cost.js';
import { compileRules, type RuleNode, validateRules } from '../kinds/customresourcedefinition/schema/cel-rules.js';
import { applyDefaults, pruneNonNullableNulls, schemaHasDefaults } from '../kinds/customresourcedefinition/schema/defaulting.js';
import { validateEmbeddedMeta } from '../kinds/customresourcedefinition/schema/embedded-meta.validation.js';
import { validateListSetsAndMaps } from '../kinds/customresourcedefinition/schema/list-type.validation.js';
import { validateSchemaValue } from '../kinds/customresourcedefinition/schema/value-validation.js';

/**
 * Rules estimated to cost at most this much per object (all of them, each
 * as often as it can run) are evaluated inline rather than on a CEL
 * worker: that is microseconds, less than the hop to a worker costs the
 * event loop (measured: a trivial rule 16 µs inline, 26–42 µs of
 * event-loop time to post it to a worker and take the answer).
 */
export const CEL_INLINE_RULES_COST = 1_000;

/**
 * Everything one CRD version's schema does to its objects, compiled once
 * when the CRD is loaded: pruning and unknown-field reports on decode,
 * defaulting (on writes and reads), and validation (OpenAPI value checks,
 * embedded ObjectMeta, list-type invariants, then CEL rules unless a
 * blocking error was found, as upstream).
 */
export class CustomResourceSchema {
  readonly rules: RuleNode | undefined;
  readonly hasDefaults: boolean;
  /** Identifies the schema to the CEL workers (a digest of its JSON), when it has rules. */
  readonly rulesKey: string | undefined;
  /** True when the rules are cheap enough to run inline (see CEL_INLINE_RULES_COST). */
  readonly rulesInline: boolean;

  constructor(
    readonly schema: StructuralSchema,
    private readonly kind: string,
    private readonly version: string,
  ) {
    this.rules = compileRules(schema);
    this.hasDefaults = schemaHasDefaults(schema);
    this.rulesKey = this.rules ? createHash('sha256').update(JSON.stringify(schema)).digest('base64url') : undefined;
    this.rulesInline = estimatedRulesCost(this.rules) <= CEL_INLINE_RULES_COST;
  }

  /** Prunes undeclared fields of `obj` in place; returns their paths (`.spec.foo`), in upstream's order. */
  prune(obj: KubeObject): string[] {
    const { pruned, removed } = pruneUnknownFields(obj, this.schema, { objectMeta: objectMetaSchema });
    if (removed.length > 0) {
      for (const k of Object.keys(obj)) delete obj[k];
      Object.assign(obj, pruned);
    }
    pruneNonNullableNulls(obj, this.schema);
    return removed;
  }

  /**
   * Decode-time field validation: Strict throws 400 `strict decoding
   * error: unknown field "spec.foo"`, Warn adds one warning per field.
   */
  decode(obj: KubeObject, body: { duplicates: string[]; yaml: boolean }, mode: 'Ignore' | 'Warn' | 'Strict', warnings: string[]): void {
    const removed = this.prune(obj);
    if (mode === 'Ignore') return;
    const issues: StrictIssue[] = [
      ...(body.yaml ? [] : body.duplicates.map((path) => ({ kind: 'duplicate' as const, path }))),
      ...removed.map((p) => ({ kind: 'unknown' as const, path: p.slice(1) })),
    ];
    const yamlDuplicates = body.yaml ? body.duplicates : [];
    if (mode === 'Strict') {
      const msg = strictDecodingMessage(issues, yamlDuplicates);
      if (msg) throw ApiError.badRequest(`${this.kind} in version "${this.version}" cannot be handled as a ${this.kind}: ${msg}`);
      return;
    }
    warnings.push(...yamlDuplicates, ...issues.map((i) => `${i.kind} field "${i.path}"`));
  }

  /** Applies defaults in place. */
  defaultObject(obj: unknown): void {
    if (this.hasDefaults) applyDefaults(obj, this.schema);
  }

  /**
   * Validation of a whole object (create, or update with `old`). On updates,
   * schema errors at values that did not change are dropped (upstream's
   * CRDValidationRatcheting, on by default in 1.32), so objects that a
   * stricter schema would reject can still be updated elsewhere.
   */
  async validate(obj: KubeObject, old?: KubeObject, celRules?: RuleOffload): Promise<FieldError[]> {
    const valueErrs = validateSchemaValue(obj, this.schema);
    const errs = [...(old ? ratchet(valueErrs, obj, old) : valueErrs), ...validateEmbeddedMeta(obj, this.schema)];
    const listErrs = validateListSetsAndMaps(obj, this.schema);
    if (!old || validateListSetsAndMaps(old, this.schema).length === 0) errs.push(...listErrs);
    errs.push(...(await this.celErrors(errs, obj, old, celRules)));
    return errs;
  }

  /** Validation of a /status write: the status subtree and rules. */
  async validateStatus(obj: KubeObject, old: KubeObject, celRules?: RuleOffload): Promise<FieldError[]> {
    const statusSchema = this.schema.properties?.status;
    const errs = statusSchema && obj.status !== undefined ? validateSchemaValue(obj.status, statusSchema, 'status') : [];
    const listErrs = validateListSetsAndMaps(obj, this.schema);
    if (listErrs.length > 0 && validateListSetsAndMaps(old, this.schema).length === 0) errs.push(...listErrs);
    errs.push(...(await this.celErrors(errs, obj, old, celRules)));
    return errs;
  }

  /** The CEL rule violations: on `celRules` (the worker pool) when given and the rules are not trivial, else here. */
  private async celErrors(errs: FieldError[], obj: KubeObject, old: KubeObject | undefined, celRules: RuleOffload | undefined): Promise<FieldError[]> {
    if (!this.rules) return [];
    const blocking = errs.some((e) => ['FieldValueNotSupported', 'FieldValueRequired', 'FieldValueTooLong', 'FieldValueTooMany', 'FieldValueTypeInvalid'].includes(e.type));
    if (blocking) {
      return [{ type: 'FieldValueInvalid', field: '<nil>', value: null, detail: 'some validation rules were not checked because the object was invalid; correct the existing errors to complete validation' }];
    }
    if (celRules && !this.rulesInline) return celRules({ key: this.rulesKey!, schema: this.schema, obj, old });
    return validateRules(this.rules, obj, old);
  }
}

/** Evaluates a schema's CEL rules elsewhere (StrategyContext.celRules: the worker pool). */
export type RuleOffload = (job: CelRulesJob) => Promise<FieldError[]>;

/** The value at a field path such as `spec.bars[0].name`, or undefined. */
function valueAt(obj: unknown, field: string): unknown {
  let v: unknown = obj;
  for (const seg of field.split(/\.|\[|\]/).filter((x) => x !== '')) {
    if (Array.isArray(v) && /^\d+$/.test(seg)) v = v[Number(seg)];
    else if (v !== null && typeof v === 'object' && !Array.isArray(v)) v = (v as Record<string, unknown>)[seg];
    else return undefined;
  }
  return v;
}

/** Drops errors whose value is unchanged from `old` (ratcheting). */
function ratchet(errs: FieldError[], obj: KubeObject, old: KubeObject): FieldError[] {
  return errs.filter((e) => {
    if (!e.field || e.field === '<nil>') return true;
    const now = valueAt(obj, e.field);
    return now === undefined || !isDeepStrictEqual(now, valueAt(old, e.field));
  });
}
