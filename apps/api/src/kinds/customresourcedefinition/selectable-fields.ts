import { type FieldError, fieldErrors } from '@plinth/apimachinery';
import { type KubeObject, isPlainObject } from '@plinth/apimachinery';
import type { StructuralSchema } from '@plinth/apimachinery';

/**
 * A CRD version's `selectableFields`: JSON paths (`.spec.color`) to
 * string, boolean or integer fields that field selectors may use, as
 * `spec.color=blue`.
 */

/** Upstream's limit on selectable fields per version. */
export const MAX_SELECTABLE_FIELDS = 8;

/** Resolves a dotted path against the schema; returns the field's schema or an error text. */
function resolve(jsonPath: string, schema: StructuralSchema): { segments: string[]; schema?: StructuralSchema; error?: string } {
  if (!jsonPath.startsWith('.')) return { segments: [], error: `expected [ or . but got: ${jsonPath.split('.')[0]}` };
  const segments = jsonPath.slice(1).split('.');
  let s: StructuralSchema | undefined = schema;
  for (const seg of segments) {
    if (!seg) return { segments, error: 'unexpected end of JSON path' };
    if (/[[\]]/.test(seg)) return { segments, error: 'array notation is not allowed' };
    if (s?.properties) {
      if (!Object.hasOwn(s.properties, seg)) return { segments, error: 'does not refer to a valid field' };
      s = s.properties[seg];
    } else if (s && typeof s.additionalProperties === 'object') s = s.additionalProperties;
    else return { segments, error: 'does not refer to a valid field' };
  }
  return { segments, schema: s };
}

/** Upstream ValidateCustomResourceSelectableFields. */
export function validateSelectableFields(fields: Array<{ jsonPath?: string }>, schema: StructuralSchema, p: string): FieldError[] {
  const errs: FieldError[] = [];
  const unique = new Set<string>();
  fields.forEach((f, i) => {
    const fp = `${p}[${i}].jsonPath`;
    if (!f.jsonPath) {
      errs.push(fieldErrors.required(fp));
      return;
    }
    const r = resolve(f.jsonPath, schema);
    if (r.error) {
      errs.push(fieldErrors.invalid(fp, f.jsonPath, `is an invalid path: ${r.error}`));
      return;
    }
    if (r.segments[0] === 'metadata') errs.push(fieldErrors.invalid(fp, f.jsonPath, 'must not point to fields in metadata'));
    if (!r.schema || !['string', 'boolean', 'integer'].includes(r.schema.type ?? '')) {
      errs.push(fieldErrors.invalid(fp, f.jsonPath, 'must point to a field of type string, boolean or integer. Enum string fields and strings with formats are allowed.'));
    }
    const key = r.segments.join('.');
    if (unique.has(key)) errs.push(fieldErrors.duplicate(fp, f.jsonPath));
    unique.add(key);
  });
  if (unique.size > MAX_SELECTABLE_FIELDS) errs.push(fieldErrors.tooMany(p, unique.size, MAX_SELECTABLE_FIELDS));
  return errs;
}

/** Field-selector getters for a version's selectable fields, keyed `spec.color`. */
export function selectableFieldGetters(fields: Array<{ jsonPath?: string }> | null | undefined): Record<string, (obj: KubeObject) => string> {
  const out: Record<string, (obj: KubeObject) => string> = {};
  for (const f of fields ?? []) {
    if (!f.jsonPath?.startsWith('.')) continue;
    const segments = f.jsonPath.slice(1).split('.');
    out[segments.join('.')] = (obj) => {
      let v: unknown = obj;
      for (const seg of segments) v = isPlainObject(v) ? v[seg] : undefined;
      return v === undefined || v === null ? '' : String(v);
    };
  }
  return out;
}
