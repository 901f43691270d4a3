import { isDeepStrictEqual } from 'node:util';
import { compileRe2 } from '@plinth/cel';
import { type FieldError, fieldErrors } from '@plinth/apimachinery';
import { isPlainObject } from '@plinth/apimachinery';
import type { StructuralSchema } from '@plinth/apimachinery';
import { checkFormat, supportedFormat } from './formats.js';

/**
 * Validates a custom resource against its OpenAPI v3 schema the way
 * kube-openapi's validator does, with apiextensions-apiserver's mapping of
 * its errors to field errors: `spec.x: Invalid value: "string": spec.x in
 * body must be of type integer: "string"`, `Required value`,
 * `Unsupported value: …: supported values: …`, `Too long: …`, `Too many: …`.
 * Pure; never throws.
 */

/** Node kinds of the value validations inside allOf/anyOf/oneOf/not. */
type Schema = StructuralSchema & { allOf?: Schema[]; anyOf?: Schema[]; oneOf?: Schema[]; not?: Schema; multipleOf?: number };

function jsonType(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  if (typeof v === 'object') return 'object';
  return typeof v === 'string' ? 'string' : typeof v === 'boolean' ? 'boolean' : 'object';
}

/** Go's %v of a float64 limit (integers print bare). */
function num(n: number): string {
  return String(n);
}

function typesOf(s: Schema): string[] {
  if (s['x-kubernetes-int-or-string']) return ['integer', 'string'];
  return s.type ? [s.type] : [];
}

function typeMatches(types: string[], v: unknown): boolean {
  const t = jsonType(v);
  return types.includes(t) || (t === 'integer' && types.includes('number'));
}

class Validator {
  readonly errs: FieldError[] = [];

  invalid(path: string, value: unknown, detail: string): void {
    this.errs.push(fieldErrors.invalid(path, value, detail));
  }

  node(v: unknown, s: Schema, path: string): void {
    const types = typesOf(s);
    if (v === null) {
      if (types.length > 0 && !s.nullable) this.errs.push(fieldErrors.typeInvalid(path, 'null', `${path} in body must be of type ${types.join(',')}: "null"`));
      return;
    }
    if (types.length > 0 && !typeMatches(types, v)) {
      const t = jsonType(v);
      this.errs.push(fieldErrors.typeInvalid(path, t, `${path} in body must be of type ${types.join(',')}: "${t}"`));
      return;
    }
    this.composition(v, s, path);
    if (typeof v === 'string') this.string(v, s, path);
    else if (typeof v === 'number') this.number(v, s, path);
    else if (Array.isArray(v)) this.array(v, s, path);
    if (s.enum && s.enum.length > 0 && !s.enum.some((e) => isDeepStrictEqual(e, v))) {
      this.errs.push(fieldErrors.notSupported(path, v, s.enum.map((e) => (typeof e === 'string' ? e : JSON.stringify(e)))));
    }
    if (isPlainObject(v)) this.object(v, s, path);
  }

  private string(v: string, s: Schema, path: string): void {
    const len = [...v].length;
    if (s.maxLength !== undefined && len > s.maxLength) this.errs.push(fieldErrors.tooLong(path, '', s.maxLength));
    else if (s.minLength !== undefined && len < s.minLength) this.invalid(path, v, `${path} in body should be at least ${s.minLength} chars long`);
    else if (s.pattern !== undefined && !patternMatches(s.pattern, v)) this.invalid(path, v, `${path} in body should match '${s.pattern}'`);
    const format = supportedFormat(s.format);
    if (format && !checkFormat(format, v)) this.errs.push(fieldErrors.typeInvalid(path, v, `${path} in body must be of type ${format === 'datetime' ? 'date-time' : s.format}: ${JSON.stringify(v)}`));
  }

  private number(v: number, s: Schema, path: string): void {
    if (s.multipleOf !== undefined && s.multipleOf > 0 && !Number.isInteger(v / s.multipleOf)) {
      this.invalid(path, v, `${path} in body should be a multiple of ${num(s.multipleOf)}`);
    }
    if (s.maximum !== undefined && (s.exclusiveMaximum ? v >= s.maximum : v > s.maximum)) {
      this.invalid(path, v, `${path} in body should be less than ${s.exclusiveMaximum ? '' : 'or equal to '}${num(s.maximum)}`);
    }
    if (s.minimum !== undefined && (s.exclusiveMinimum ? v <= s.minimum : v < s.minimum)) {
      this.invalid(path, v, `${path} in body should be greater than ${s.exclusiveMinimum ? '' : 'or equal to '}${num(s.minimum)}`);
    }
  }

  private array(v: unknown[], s: Schema, path: string): void {
    if (s.maxItems !== undefined && v.length > s.maxItems) this.errs.push(fieldErrors.tooMany(path, v.length, s.maxItems));
    if (s.minItems !== undefined && v.length < s.minItems) this.invalid(path, v.length, `${path} in body should have at least ${s.minItems} items`);
    if (s.uniqueItems && v.some((x, i) => v.findIndex((y) => isDeepStrictEqual(x, y)) !== i)) this.invalid(path, '', `${path} in body shouldn't contain duplicates`);
    if (s.items) for (let i = 0; i < v.length; i++) this.node(v[i], s.items as Schema, `${path}[${i}]`);
  }

  private object(v: Record<string, unknown>, s: Schema, path: string): void {
    const n = Object.keys(v).length;
    if (s.minProperties !== undefined && n < s.minProperties) this.invalid(path, n, `${path} in body should have at least ${s.minProperties} properties`);
    if (s.maxProperties !== undefined && n > s.maxProperties) this.errs.push(fieldErrors.tooMany(path, n, s.maxProperties));
    const additional = typeof s.additionalProperties === 'object' ? (s.additionalProperties as Schema) : undefined;
    for (const [k, child] of Object.entries(v)) {
      const childPath = path === '' ? k : `${path}.${k}`;
      const prop = s.properties && Object.hasOwn(s.properties, k) ? (s.properties[k] as Schema) : undefined;
      if (prop) this.node(child, prop, childPath);
      else if (additional) this.node(child, additional, `${path}.${k}`);
    }
    for (const req of s.required ?? []) if (!Object.hasOwn(v, req)) this.errs.push(fieldErrors.required(path === '' ? req : `${path}.${req}`));
  }

  private composition(v: unknown, s: Schema, path: string): void {
    const sub = (schema: Schema): FieldError[] => {
      const inner = new Validator();
      inner.node(v, schema, path);
      return inner.errs;
    };
    if (s.anyOf && s.anyOf.length > 0) {
      const results = s.anyOf.map(sub);
      if (!results.some((r) => r.length === 0)) {
        this.invalid('<nil>', '', `${JSON.stringify(path)} must validate at least one schema (anyOf)`);
        this.errs.push(...results.reduce((best, r) => (r.length < best.length ? r : best)));
      }
    }
    if (s.oneOf && s.oneOf.length > 0) {
      const results = s.oneOf.map(sub);
      const valid = results.filter((r) => r.length === 0).length;
      if (valid !== 1) {
        this.invalid('<nil>', '', `${JSON.stringify(path)} must validate one and only one schema (oneOf). ${valid === 0 ? 'Found none valid' : `Found ${valid} valid alternatives`}`);
        if (valid === 0) this.errs.push(...results.reduce((best, r) => (r.length < best.length ? r : best)));
      }
    }
    if (s.allOf && s.allOf.length > 0) {
      const results = s.allOf.map(sub);
      const valid = results.filter((r) => r.length === 0).length;
      for (const r of results) this.errs.push(...r);
      if (valid !== results.length) this.invalid('<nil>', '', `${JSON.stringify(path)} must validate all the schemas (allOf)${valid === 0 ? '. None validated' : ''}`);
    }
    if (s.not && sub(s.not).length === 0) this.invalid('<nil>', '', `${JSON.stringify(path)} must not validate the schema (not)`);
  }
}

function patternMatches(pattern: string, value: string): boolean {
  try {
    return compileRe2(pattern).test(value);
  } catch {
    return false;
  }
}

/** Field errors of `value` against `schema`; `path` prefixes field paths ('' at the root). */
export function validateSchemaValue(value: unknown, schema: StructuralSchema, path = ''): FieldError[] {
  const v = new Validator();
  v.node(value, schema as Schema, path);
  return v.errs;
}
