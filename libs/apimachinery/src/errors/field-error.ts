/**
 * Field errors as k8s.io/apimachinery/pkg/util/validation/field has them.
 * Validation functions return lists of these; one mapper turns them into a
 * 422 Invalid Status (see api-error.ts).
 */
export type FieldErrorType =
  | 'FieldValueRequired'
  | 'FieldValueInvalid'
  | 'FieldValueNotSupported'
  | 'FieldValueDuplicate'
  | 'FieldValueForbidden'
  | 'FieldValueTooLong'
  | 'FieldValueTooMany'
  | 'FieldValueTypeInvalid'
  | 'FieldValueNotFound';

/** One validation failure at a field path such as `metadata.labels` or `data[a b]`. */
export interface FieldError {
  type: FieldErrorType;
  /** Dotted path with `[i]` / `[key]` subscripts, e.g. `spec.containers[0].image`. */
  field: string;
  /** The offending value; omitted for Required/Forbidden. */
  value?: unknown;
  detail?: string;
  /** For NotSupported: the allowed values. */
  supported?: string[];
  /** For TooLong / TooMany: the limit. */
  limit?: number;
}

/** Builders; each returns a new FieldError and never throws. */
export const fieldErrors = {
  required: (field: string, detail = ''): FieldError => ({ type: 'FieldValueRequired', field, detail }),
  invalid: (field: string, value: unknown, detail: string): FieldError => ({ type: 'FieldValueInvalid', field, value, detail }),
  notSupported: (field: string, value: unknown, supported: string[]): FieldError => ({
    type: 'FieldValueNotSupported',
    field,
    value,
    supported,
  }),
  duplicate: (field: string, value: unknown): FieldError => ({ type: 'FieldValueDuplicate', field, value }),
  forbidden: (field: string, detail: string): FieldError => ({ type: 'FieldValueForbidden', field, detail }),
  tooLong: (field: string, value: unknown, limit: number): FieldError => ({ type: 'FieldValueTooLong', field, value, limit }),
  tooMany: (field: string, actual: number, limit: number): FieldError => ({
    type: 'FieldValueTooMany',
    field,
    value: actual,
    limit,
  }),
  typeInvalid: (field: string, value: unknown, detail: string): FieldError => ({
    type: 'FieldValueTypeInvalid',
    field,
    value,
    detail,
  }),
  notFound: (field: string, value: unknown): FieldError => ({ type: 'FieldValueNotFound', field, value }),
};

/** Renders a value the way Go's field.Error does: strings quoted, scalars bare, objects as JSON. */
function renderValue(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
}

/** The error's text without the field path, as used in `causes[].message`. */
export function fieldErrorBody(e: FieldError): string {
  switch (e.type) {
    case 'FieldValueRequired':
      return e.detail ? `Required value: ${e.detail}` : 'Required value';
    case 'FieldValueInvalid':
    case 'FieldValueTypeInvalid':
      return e.detail ? `Invalid value: ${renderValue(e.value)}: ${e.detail}` : `Invalid value: ${renderValue(e.value)}`;
    case 'FieldValueNotSupported': {
      const supported = (e.supported ?? []).map((s) => JSON.stringify(s)).join(', ');
      return supported
        ? `Unsupported value: ${renderValue(e.value)}: supported values: ${supported}`
        : `Unsupported value: ${renderValue(e.value)}`;
    }
    case 'FieldValueDuplicate':
      return `Duplicate value: ${renderValue(e.value)}`;
    case 'FieldValueForbidden':
      return e.detail ? `Forbidden: ${e.detail}` : 'Forbidden';
    case 'FieldValueTooLong':
      return `Too long: may not be more than ${e.limit} bytes`;
    case 'FieldValueTooMany':
      return `Too many: ${e.value}: must have at most ${e.limit} items`;
    case 'FieldValueNotFound':
      return `Not found: ${renderValue(e.value)}`;
  }
}

/** `field: body`, the form used in the Status message. */
export function fieldErrorMessage(e: FieldError): string {
  return e.field ? `${e.field}: ${fieldErrorBody(e)}` : fieldErrorBody(e);
}
