import { isDeepStrictEqual } from 'node:util';
import { pruneUnknownFields } from '@plinth/apimachinery';
import { type FieldError, fieldErrors } from '@plinth/apimachinery';
import { multiplySaturating } from '@plinth/cel';
import type { StructuralSchema } from '@plinth/apimachinery';
import { objectMetaSchema } from '../../../schema/object-meta.schema.js';
import { CelCostTotal, childCardinality, ruleCostErrors } from './cel-cost.js';
import { ruleCompileErrors, type ValidationRule } from './cel-rules.js';
import { validateEmbeddedMeta } from './embedded-meta.validation.js';
import { validateSchemaValue } from './value-validation.js';

/**
 * The per-node checks apiextensions-apiserver applies to a CRD's
 * openAPIV3Schema (ValidateCustomResourceDefinitionOpenAPISchema and
 * ValidateDefaults): unsupported JSON-Schema keywords, list/map type
 * extensions, x-kubernetes-validations (compiled with the CEL environment),
 * and defaults that must validate and be pruned. Pure.
 */

type Node = StructuralSchema & Record<string, unknown>;

const OPENAPI_TYPES = ['array', 'boolean', 'integer', 'number', 'object', 'string'];
const REASONS = ['FieldValueDuplicate', 'FieldValueForbidden', 'FieldValueInvalid', 'FieldValueRequired'];
const META_FIELDS = new Set(['metadata', 'kind', 'apiVersion']);

interface Ctx {
  allowDefaults: boolean;
  defaultsReason: string;
  insideMeta: boolean;
  /** The first ancestor path where old/new values cannot be correlated, if any. */
  uncorrelatable?: string;
  /** How many times a rule at this node may run per object (product of maxItems/maxProperties above); undefined when unbounded. */
  cardinality: number | undefined;
  /** The estimated cost of every rule so far. */
  costs: CelCostTotal;
  /** True for a schema an update leaves unchanged: no per-rule cost limit (the total still applies). */
  suppressPerExpressionCost: boolean;
}

function keywordChecks(s: Node, p: string, ctx: Ctx, errs: FieldError[]): void {
  const type = s.type as string | undefined;
  if (typeof type === 'string' && type !== '' && !OPENAPI_TYPES.includes(type)) {
    if (type === 'null') errs.push(fieldErrors.forbidden(`${p}.type`, 'type cannot be set to null, use nullable as an alternative'));
    else errs.push(fieldErrors.notSupported(`${p}.type`, type, OPENAPI_TYPES));
  }
  if (s.default !== undefined && !ctx.allowDefaults) errs.push(fieldErrors.forbidden(`${p}.default`, `must not be set${ctx.defaultsReason ? ` ${ctx.defaultsReason}` : ''}`));
  const unsupported: Array<[string, string]> = [
    ['id', 'id is not supported'],
    ['additionalItems', 'additionalItems is not supported'],
    ['patternProperties', 'patternProperties is not supported'],
    ['definitions', 'definitions is not supported'],
    ['dependencies', 'dependencies is not supported'],
    ['$ref', '$ref is not supported'],
  ];
  for (const [k, msg] of unsupported) if (s[k] !== undefined && s[k] !== '' && !(isObj(s[k]) && Object.keys(s[k] as object).length === 0)) errs.push(fieldErrors.forbidden(`${p}.${k}`, msg));
  if (Array.isArray(s.items)) errs.push(fieldErrors.forbidden(`${p}.items`, 'items must be a schema object and not an array'));
  if (ctx.insideMeta && s['x-kubernetes-embedded-resource']) errs.push(fieldErrors.forbidden(`${p}.x-kubernetes-embedded-resource`, 'must not be used inside of resource meta'));
  if (s.uniqueItems === true) errs.push(fieldErrors.forbidden(`${p}.uniqueItems`, 'uniqueItems cannot be set to true since the runtime complexity becomes quadratic'));
  if (s.additionalProperties !== undefined && Object.keys(s.properties ?? {}).length > 0) {
    if (s.additionalProperties === false || isObj(s.additionalProperties)) errs.push(fieldErrors.forbidden(`${p}.additionalProperties`, 'additionalProperties and properties are mutual exclusive'));
  }
  if (s['x-kubernetes-preserve-unknown-fields'] === false) errs.push(fieldErrors.invalid(`${p}.x-kubernetes-preserve-unknown-fields`, false, 'must be true or undefined'));
}

function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function listAndMapChecks(s: Node, p: string, errs: FieldError[]): void {
  const mapType = s['x-kubernetes-map-type'];
  if (mapType !== undefined && s.type !== 'object') {
    if (!s.type) errs.push(fieldErrors.required(`${p}.type`, 'must be object if x-kubernetes-map-type is specified'));
    else errs.push(fieldErrors.invalid(`${p}.type`, s.type, 'must be object if x-kubernetes-map-type is specified'));
  }
  if (mapType !== undefined && mapType !== 'atomic' && mapType !== 'granular') errs.push(fieldErrors.notSupported(`${p}.x-kubernetes-map-type`, mapType, ['atomic', 'granular']));
  const listType = s['x-kubernetes-list-type'];
  const items = isObj(s.items) ? (s.items as Node) : undefined;
  if (listType !== undefined && s.type !== 'array') {
    if (!s.type) errs.push(fieldErrors.required(`${p}.type`, 'must be array if x-kubernetes-list-type is specified'));
    else errs.push(fieldErrors.invalid(`${p}.type`, s.type, 'must be array if x-kubernetes-list-type is specified'));
  } else if (listType === 'set' && items) {
    if (items.type === 'array' && items['x-kubernetes-list-type'] !== undefined && items['x-kubernetes-list-type'] !== 'atomic') {
      errs.push(fieldErrors.invalid(`${p}.items.x-kubernetes-list-type`, items['x-kubernetes-list-type'], 'must be atomic as item of a list with x-kubernetes-list-type=set'));
    }
    if (items.type === 'object' && items['x-kubernetes-map-type'] !== 'atomic') {
      errs.push(fieldErrors.invalid(`${p}.items.x-kubernetes-map-type`, items['x-kubernetes-map-type'] ?? null, 'must be atomic as item of a list with x-kubernetes-list-type=set'));
    }
  }
  if (listType !== undefined && !['atomic', 'set', 'map'].includes(listType)) errs.push(fieldErrors.notSupported(`${p}.x-kubernetes-list-type`, listType, ['atomic', 'set', 'map']));
  const keys = s['x-kubernetes-list-map-keys'] ?? [];
  if (keys.length > 0) {
    if (listType === undefined) errs.push(fieldErrors.required(`${p}.x-kubernetes-list-type`, 'must be map if x-kubernetes-list-map-keys is non-empty'));
    else if (listType !== 'map') errs.push(fieldErrors.invalid(`${p}.x-kubernetes-list-type`, listType, 'must be map if x-kubernetes-list-map-keys is non-empty'));
  }
  if (listType === 'map') mapListChecks(s, items, keys, p, errs);
  if ((listType === 'set' || listType === 'map') && items?.nullable) errs.push(fieldErrors.forbidden(`${p}.items.nullable`, `cannot be nullable when x-kubernetes-list-type is ${listType}`));
}

function mapListChecks(s: Node, items: Node | undefined, keys: string[], p: string, errs: FieldError[]): void {
  if (keys.length === 0) errs.push(fieldErrors.required(`${p}.x-kubernetes-list-map-keys`, 'must not be empty if x-kubernetes-list-type is map'));
  if (s.items === undefined) errs.push(fieldErrors.required(`${p}.items`, 'must have a schema if x-kubernetes-list-type is map'));
  if (!items) return;
  if (items.type !== 'object') {
    errs.push(fieldErrors.invalid(`${p}.items.type`, items.type ?? '', "must be object if parent array's x-kubernetes-list-type is map"));
    return;
  }
  const seen = new Set<string>();
  for (const k of keys) {
    const prop = items.properties?.[k] as Node | undefined;
    if (!prop) errs.push(fieldErrors.invalid(`${p}.x-kubernetes-list-map-keys`, keys, 'entries must all be names of item properties'));
    else {
      if (prop.type === 'array' || prop.type === 'object') errs.push(fieldErrors.invalid(`${p}.items.properties[${k}].type`, items.type, "must be a scalar type if parent array's x-kubernetes-list-type is map"));
      if (!(items.required ?? []).includes(k) && prop.default === undefined) {
        errs.push(fieldErrors.required(`${p}.items.properties[${k}].default`, 'this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property'));
      }
      if (prop.nullable) errs.push(fieldErrors.forbidden(`${p}.items.properties[${k}].nullable`, 'this property is in x-kubernetes-list-map-keys, so it cannot be nullable'));
    }
    if (seen.has(k)) errs.push(fieldErrors.invalid(`${p}.x-kubernetes-list-map-keys`, keys, 'must not contain duplicate entries'));
    seen.add(k);
  }
}

function ruleChecks(s: Node, p: string, ctx: Ctx, isRoot: boolean, errs: FieldError[], celErrs: FieldError[]): void {
  const rules = (s['x-kubernetes-validations'] ?? []) as ValidationRule[];
  if (!Array.isArray(rules) || rules.length === 0) return;
  const before = errs.length;
  rules.forEach((r, i) => {
    const rp = `${p}.x-kubernetes-validations[${i}]`;
    const rule = (r.rule ?? '').trim();
    const msg = (r.message ?? '').trim();
    if (!rule) errs.push(fieldErrors.required(`${rp}.rule`, 'rule is not specified'));
    else if (r.message !== undefined && r.message.length > 0 && !msg) errs.push(fieldErrors.invalid(`${rp}.message`, r.message, 'message must be non-empty if specified'));
    else if (/[\n\r]/.test(msg)) errs.push(fieldErrors.invalid(`${rp}.message`, r.message, 'message must not contain line breaks'));
    else if (/[\n\r]/.test(rule) && !msg) errs.push(fieldErrors.required(`${rp}.message`, 'message must be specified if rule contains line breaks'));
    if (r.messageExpression !== undefined && r.messageExpression.length > 0 && !r.messageExpression.trim()) errs.push(fieldErrors.required(`${rp}.messageExpression`, 'messageExpression must be non-empty if specified'));
    if (r.reason !== undefined && !REASONS.includes(r.reason)) errs.push(fieldErrors.notSupported(`${rp}.reason`, r.reason, REASONS));
    if (r.fieldPath !== undefined && r.fieldPath.length > 0 && !r.fieldPath.trim()) errs.push(fieldErrors.invalid(`${rp}.fieldPath`, r.fieldPath, 'fieldPath must be non-empty if specified'));
  });
  if (errs.length > before) return;
  let compiled = true;
  for (const e of ruleCompileErrors(rules)) {
    if (e.detail) compiled = false;
    const rp = `${p}.x-kubernetes-validations[${e.index}]`;
    if (e.detail) celErrs.push(fieldErrors.invalid(`${rp}.${e.field}`, rules[e.index], e.detail));
    else if (e.usesOldSelf && ctx.uncorrelatable !== undefined) {
      celErrs.push(fieldErrors.invalid(`${rp}.rule`, rules[e.index].rule, `oldSelf cannot be used on the uncorrelatable portion of the schema within ${ctx.uncorrelatable}`));
    } else if (!e.usesOldSelf && rules[e.index].optionalOldSelf !== undefined) {
      celErrs.push(fieldErrors.invalid(`${rp}.optionalOldSelf`, rules[e.index].optionalOldSelf, 'may not be set if oldSelf is not used in rule'));
    }
  }
  if (!compiled) return;
  const costErrs = ruleCostErrors(rules, s, p, ctx.cardinality, ctx.costs, isRoot || s['x-kubernetes-embedded-resource'] === true);
  if (!ctx.suppressPerExpressionCost) celErrs.push(...costErrs);
}

/** The context of a child of `s`: its cardinality multiplied by what `s` multiplies it by (upstream childContext). */
function below(ctx: Ctx, s: Node): Ctx {
  const n = childCardinality(s);
  return { ...ctx, cardinality: ctx.cardinality === undefined || n === undefined ? undefined : multiplySaturating(ctx.cardinality, n) };
}

function walk(s: Node | undefined, p: string, ctx: Ctx, isRoot: boolean, errs: FieldError[], celErrs: FieldError[]): void {
  if (!isObj(s)) return;
  keywordChecks(s, p, ctx, errs);
  if (isObj(s.additionalProperties)) {
    const sub = below(ctx.insideMeta ? { ...ctx, allowDefaults: false, defaultsReason: 'inside additionalProperties applying to object metadata' } : ctx, s);
    walk(s.additionalProperties as Node, `${p}.additionalProperties`, sub, false, errs, celErrs);
  }
  const propertyCtx = s.properties ? below(ctx, s) : ctx;
  for (const [k, v] of Object.entries(s.properties ?? {})) {
    let sub: Ctx = propertyCtx;
    if (s['x-kubernetes-map-type'] === 'atomic' && sub.uncorrelatable === undefined) sub = { ...sub, uncorrelatable: p };
    if ((isRoot || s['x-kubernetes-embedded-resource']) && META_FIELDS.has(k)) {
      sub = { ...sub, insideMeta: true };
      if (isRoot) sub = { ...sub, allowDefaults: false, defaultsReason: `in top-level ${k}` };
    }
    walk(v as Node, `${p}.properties[${k}]`, sub, false, errs, celErrs);
  }
  for (const j of ['allOf', 'anyOf', 'oneOf'] as const) (s[j] as Node[] | undefined)?.forEach((n, i) => walk(n, `${p}.${j}[${i}]`, ctx, false, errs, celErrs));
  if (isObj(s.not)) walk(s.not as Node, `${p}.not`, ctx, false, errs, celErrs);
  if (isObj(s.items)) {
    const sub = s['x-kubernetes-list-type'] !== 'map' && ctx.uncorrelatable === undefined ? { ...ctx, uncorrelatable: p } : ctx;
    walk(s.items as Node, `${p}.items`, below(sub, s), false, errs, celErrs);
  }
  listAndMapChecks(s, p, errs);
  ruleChecks(s, p, ctx, isRoot, errs, celErrs);
}

/**
 * Schema errors, then CEL errors, of a whole openAPIV3Schema at `path`.
 * `suppressPerExpressionCost` for a schema an update leaves unchanged.
 */
export function validateOpenApiSchema(schema: StructuralSchema, path: string, allowDefaults = true, opts: { suppressPerExpressionCost?: boolean } = {}): FieldError[] {
  const errs: FieldError[] = [];
  const celErrs: FieldError[] = [];
  const costs = new CelCostTotal();
  const ctx: Ctx = { allowDefaults, defaultsReason: '', insideMeta: false, cardinality: 1, costs, suppressPerExpressionCost: opts.suppressPerExpressionCost === true };
  walk(schema as Node, path, ctx, true, errs, celErrs);
  return [...errs, ...celErrs, ...costs.errors(path)];
}

/** The errors of every `default` under `schema`: it must validate against its node and carry no unknown fields. */
export function validateDefaults(schema: StructuralSchema, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const visit = (s: StructuralSchema | undefined, p: string, embedded: boolean): void => {
    if (!isObj(s)) return;
    if (s.default !== undefined) {
      const pruned = pruneUnknownFields(s.default, s, { objectMeta: objectMetaSchema }).pruned;
      const dp = `${p}.default`;
      if (!isDeepStrictEqual(pruned, s.default)) errs.push(fieldErrors.invalid(dp, s.default, 'must not have unknown fields'));
      else {
        const metaErrs = validateEmbeddedMeta(s.default, s, dp, s['x-kubernetes-embedded-resource'] === true || embedded);
        const valueErrs = validateSchemaValue(s.default, s, '').map((e) => ({ ...e, field: e.field === '' || e.field === '<nil>' ? dp : `${dp}.${e.field}` }));
        errs.push(...(metaErrs.length > 0 ? metaErrs : valueErrs));
      }
    }
    if (isObj(s.items)) visit(s.items, `${p}.items`, false);
    for (const [k, v] of Object.entries(s.properties ?? {})) visit(v, `${p}.properties[${k}]`, false);
    if (isObj(s.additionalProperties)) visit(s.additionalProperties as StructuralSchema, `${p}.additionalProperties`, false);
  };
  visit(schema, path, false);
  return errs;
}
