import { Re2SyntaxError, compileRe2 } from '@plinth/cel';
import { type FieldError, fieldErrorMessage, fieldErrors } from '@plinth/apimachinery';
import type { StructuralSchema } from '@plinth/apimachinery';

/**
 * Whether a CRD schema is structural (apiextensions-apiserver
 * schema.ValidateStructural): every node has a type (or is int-or-string /
 * preserve-unknown), arrays have items, value validations under
 * allOf/anyOf/oneOf/not carry no types, defaults, descriptions or
 * extensions and name no field the structural part lacks, metadata at the
 * root restricts only name/generateName. Errors are sorted by their text,
 * as upstream does. Pure.
 */

type Node = StructuralSchema & Record<string, unknown>;
type Level = 'root' | 'item' | 'field';

const JUNCTORS = ['allOf', 'anyOf', 'oneOf'] as const;

function isIntOrStringAnyOf(list: unknown): boolean {
  if (!Array.isArray(list) || list.length !== 2) return false;
  const [a, b] = list as Node[];
  const only = (n: Node, t: string) => n && Object.keys(n).length === 1 && n.type === t;
  return only(a, 'integer') && only(b, 'string');
}

function invariants(s: Node | undefined, lvl: Level, p: string, errs: FieldError[]): void {
  if (!s || typeof s !== 'object') return;
  if (s.type === 'array' && !s.items) errs.push(fieldErrors.required(`${p}.items`, 'must be specified'));
  if (s.items && typeof s.items === 'object' && !Array.isArray(s.items)) invariants(s.items as Node, 'item', `${p}.items`, errs);
  for (const [k, v] of Object.entries(s.properties ?? {})) invariants(v as Node, 'field', `${p}.properties[${k}]`, errs);
  if (s.additionalProperties !== undefined) {
    if (lvl === 'root') errs.push(fieldErrors.forbidden(`${p}.additionalProperties`, 'must not be used at the root'));
    if (typeof s.additionalProperties === 'object') invariants(s.additionalProperties as Node, 'field', `${p}.additionalProperties`, errs);
  }
  if (s['x-kubernetes-int-or-string'] && s['x-kubernetes-preserve-unknown-fields']) {
    errs.push(fieldErrors.invalid(`${p}.x-kubernetes-preserve-unknown-fields`, true, 'must be false if x-kubernetes-int-or-string is true'));
  }
  if (s['x-kubernetes-int-or-string'] && s['x-kubernetes-embedded-resource']) {
    errs.push(fieldErrors.invalid(`${p}.x-kubernetes-embedded-resource`, true, 'must be false if x-kubernetes-int-or-string is true'));
  }
  valueValidation(s, lvl, p, errs, isIntOrStringAnyOf(s.anyOf), Array.isArray(s.allOf) && isIntOrStringAnyOf((s.allOf[0] as Node | undefined)?.anyOf));
  typeInvariants(s, lvl, p, errs);
}

function typeInvariants(s: Node, lvl: Level, p: string, errs: FieldError[]): void {
  const embedded = s['x-kubernetes-embedded-resource'] === true;
  if (embedded && s.type !== 'object') {
    if (!s.type) errs.push(fieldErrors.required(`${p}.type`, 'must be object if x-kubernetes-embedded-resource is true'));
    else errs.push(fieldErrors.invalid(`${p}.type`, s.type, 'must be object if x-kubernetes-embedded-resource is true'));
  } else if (!s.type && !s['x-kubernetes-int-or-string'] && !s['x-kubernetes-preserve-unknown-fields']) {
    const where = lvl === 'root' ? 'at the root' : lvl === 'item' ? 'for specified array items' : 'for specified object fields';
    errs.push(fieldErrors.required(`${p}.type`, `must not be empty ${where}`));
  }
  if (embedded && s.additionalProperties !== undefined) errs.push(fieldErrors.forbidden(`${p}.additionalProperties`, 'must not be used if x-kubernetes-embedded-resource is set'));
  if (lvl === 'root' && s.type && s.type !== 'object') errs.push(fieldErrors.invalid(`${p}.type`, s.type, 'must be object at the root'));
  const checkMeta = lvl === 'root' || embedded;
  const props = (s.properties ?? {}) as Record<string, Node>;
  for (const f of ['kind', 'apiVersion'] as const) {
    if (checkMeta && props[f] && props[f].type !== 'string') errs.push(fieldErrors.invalid(`${p}.properties[${f}].type`, props[f].type ?? '', 'must be string'));
  }
  if (props.metadata) {
    const m = props.metadata;
    const mp = `${p}.properties[metadata]`;
    if (checkMeta && m.type !== 'object') errs.push(fieldErrors.invalid(`${mp}.type`, m.type ?? '', 'must be object'));
    if (lvl === 'root') {
      const { type: _t, properties, default: _d, ...rest } = m;
      const names = Object.keys(properties ?? {});
      const onlyNames = names.every((n) => n === 'name' || n === 'generateName');
      const restKeys = Object.keys(rest).filter((k) => rest[k] !== undefined);
      if (!onlyNames || restKeys.length > 0) {
        errs.push(fieldErrors.forbidden(mp, 'must not specify anything other than name and generateName, but metadata is implicitly specified'));
      }
    }
  }
  if (embedded && !s['x-kubernetes-preserve-unknown-fields'] && Object.keys(props).length === 0) {
    errs.push(fieldErrors.required(`${p}.properties`, 'must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields'));
  }
}

function valueValidation(v: Node, lvl: Level, p: string, errs: FieldError[], skipAnyOf: boolean, skipFirstAllOfAnyOf: boolean): void {
  if (!skipAnyOf) (v.anyOf as Node[] | undefined)?.forEach((n, i) => nested(n, lvl, `${p}.anyOf[${i}]`, errs, false));
  (v.allOf as Node[] | undefined)?.forEach((n, i) => nested(n, lvl, `${p}.allOf[${i}]`, errs, skipFirstAllOfAnyOf && i === 0));
  (v.oneOf as Node[] | undefined)?.forEach((n, i) => nested(n, lvl, `${p}.oneOf[${i}]`, errs, false));
  if (v.not) nested(v.not as Node, lvl, `${p}.not`, errs, false);
  if (typeof v.pattern === 'string') {
    try {
      compileRe2(v.pattern);
    } catch (err) {
      if (err instanceof Re2SyntaxError) errs.push(fieldErrors.invalid(`${p}.pattern`, v.pattern, `must be a valid regular expression, but isn't: error parsing regexp: ${err.message}`));
    }
  }
}

const NESTED_FORBIDDEN: Array<[string, string]> = [
  ['additionalProperties', 'must be undefined to be structural'],
  ['default', 'must be undefined to be structural'],
  ['title', 'must be empty to be structural'],
  ['description', 'must be empty to be structural'],
  ['x-kubernetes-preserve-unknown-fields', 'must be false to be structural'],
  ['x-kubernetes-embedded-resource', 'must be false to be structural'],
  ['x-kubernetes-int-or-string', 'must be false to be structural'],
  ['x-kubernetes-list-map-keys', 'must be empty to be structural'],
  ['x-kubernetes-list-type', 'must be undefined to be structural'],
  ['x-kubernetes-map-type', 'must be undefined to be structural'],
  ['x-kubernetes-validations', 'must be empty to be structural'],
];

function nested(v: Node, lvl: Level, p: string, errs: FieldError[], skipAnyOf: boolean): void {
  if (!v || typeof v !== 'object') return;
  valueValidation(v, lvl, p, errs, skipAnyOf, false);
  if (v.items && typeof v.items === 'object') nested(v.items as Node, lvl, `${p}.items`, errs, false);
  for (const [k, f] of Object.entries(v.properties ?? {})) nested(f as Node, 'field', `${p}.properties[${k}]`, errs, false);
  if (v.type) errs.push(fieldErrors.forbidden(`${p}.type`, 'must be empty to be structural'));
  for (const [key, detail] of NESTED_FORBIDDEN) {
    const val = v[key];
    if (val === undefined || val === false || (Array.isArray(val) && val.length === 0) || val === '') continue;
    errs.push(fieldErrors.forbidden(`${p}.${key}`, detail));
  }
  if (v.nullable) errs.push(fieldErrors.forbidden(`${p}.nullable`, 'must be false to be structural'));
  if (v.properties && Object.hasOwn(v.properties, 'metadata')) errs.push(fieldErrors.forbidden(`${p}.properties[metadata]`, 'must not be specified in a nested context'));
}

function completeness(v: Node, s: Node | undefined, sPath: string, vPath: string, errs: FieldError[]): void {
  for (const j of JUNCTORS) (v[j] as Node[] | undefined)?.forEach((n, i) => nestedCompleteness(n, s, sPath, `${vPath}.${j}[${i}]`, errs));
  if (v.not) nestedCompleteness(v.not as Node, s, sPath, `${vPath}.not`, errs);
}

function nestedCompleteness(v: Node, s: Node | undefined, sPath: string, vPath: string, errs: FieldError[]): void {
  if (!v || typeof v !== 'object') return;
  if (!s) {
    errs.push(fieldErrors.required(sPath, `because it is defined in ${vPath}`));
    return;
  }
  completeness(v, s, sPath, vPath, errs);
  if (v.items && typeof v.items === 'object') nestedCompleteness(v.items as Node, s.items as Node | undefined, `${sPath}.items`, `${vPath}.items`, errs);
  for (const [k, f] of Object.entries(v.properties ?? {})) {
    const sf = s.properties && Object.hasOwn(s.properties, k) ? (s.properties[k] as Node) : undefined;
    if (!sf) errs.push(fieldErrors.required(`${sPath}.properties[${k}]`, `because it is defined in ${vPath}.properties[${k}]`));
    else nestedCompleteness(f as Node, sf, `${sPath}.properties[${k}]`, `${vPath}.properties[${k}]`, errs);
  }
}

/** The structural-schema violations of `schema` at field path `path`, sorted as upstream. */
export function validateStructural(schema: StructuralSchema, path: string): FieldError[] {
  const errs: FieldError[] = [];
  invariants(schema as Node, 'root', path, errs);
  // Upstream checks completeness from the root's value validations only.
  completeness(schema as Node, schema as Node, path, path, errs);
  return errs.sort((a, b) => (fieldErrorMessage(a) < fieldErrorMessage(b) ? -1 : fieldErrorMessage(a) > fieldErrorMessage(b) ? 1 : 0));
}
