import { type FieldError, fieldErrors } from '@plinth/apimachinery';
import { isPlainObject, type ObjectMeta } from '@plinth/apimachinery';
import type { StructuralSchema } from '@plinth/apimachinery';
import { isDNS1035Label } from '@plinth/apimachinery';
import { validateObjectMeta } from '@plinth/apimachinery';

/**
 * TypeMeta and ObjectMeta of x-kubernetes-embedded-resource objects
 * (apiextensions-apiserver schema/objectmeta.Validate): apiVersion and
 * kind are required strings (kind a mixed-case DNS-1035 label), metadata is
 * validated as ObjectMeta with path-segment names. Pure.
 */

function validateResource(x: Record<string, unknown>, p: string, errs: FieldError[]): void {
  const at = (f: string) => (p ? `${p}.${f}` : f);
  if (!Object.hasOwn(x, 'apiVersion')) errs.push(fieldErrors.required(at('apiVersion'), 'must not be empty'));
  if (!Object.hasOwn(x, 'kind')) errs.push(fieldErrors.required(at('kind'), 'must not be empty'));
  for (const [k, v] of Object.entries(x)) {
    if (k === 'apiVersion') {
      if (typeof v !== 'string') errs.push(fieldErrors.invalid(at(k), v, 'must be a string'));
      else if (v.length === 0) errs.push(fieldErrors.invalid(at(k), v, 'must not be empty'));
      else if (v.split('/').length > 2) errs.push(fieldErrors.invalid(at(k), v, `unexpected GroupVersion string: ${v}`));
    } else if (k === 'kind') {
      if (typeof v !== 'string') errs.push(fieldErrors.invalid(at(k), v, 'must be a string'));
      else if (v.length === 0) errs.push(fieldErrors.invalid(at(k), v, 'must not be empty'));
      else {
        const e = isDNS1035Label(v.toLowerCase());
        if (e.length > 0) errs.push(fieldErrors.invalid(at(k), v, `may have mixed case, but should otherwise match: ${e.join(',')}`));
      }
    } else if (k === 'metadata') {
      if (!isPlainObject(v)) {
        errs.push(fieldErrors.invalid(at(k), v, 'must be an object'));
        continue;
      }
      const meta = { ...(v as ObjectMeta) };
      if (!meta.name) meta.name = 'fakename';
      for (const e of validateObjectMeta(meta, { namespaced: !!meta.namespace, nameValidation: 'path-segment', requireName: false })) {
        errs.push({ ...e, field: p ? `${p}.${e.field}` : e.field });
      }
    }
  }
}

function walk(x: unknown, s: StructuralSchema | undefined, p: string, resource: boolean, errs: FieldError[]): void {
  if (!s) return;
  if (isPlainObject(x)) {
    if (resource || s['x-kubernetes-embedded-resource']) validateResource(x, p, errs);
    for (const [k, v] of Object.entries(x)) {
      const prop = s.properties && Object.hasOwn(s.properties, k) ? s.properties[k] : undefined;
      if (prop) walk(v, prop, p ? `${p}.${k}` : k, false, errs);
      else if (typeof s.additionalProperties === 'object') walk(v, s.additionalProperties, `${p}[${k}]`, false, errs);
    }
  } else if (Array.isArray(x)) {
    x.forEach((v, i) => walk(v, s.items, `${p}[${i}]`, false, errs));
  }
}

/**
 * Errors of every embedded resource in `obj` (and of `obj` itself when
 * `isResource`, which callers use for defaults of embedded nodes; the root
 * object's own metadata is validated by the store).
 */
export function validateEmbeddedMeta(obj: unknown, schema: StructuralSchema, path = '', isResource = false): FieldError[] {
  const errs: FieldError[] = [];
  walk(obj, schema, path, isResource, errs);
  return errs;
}
