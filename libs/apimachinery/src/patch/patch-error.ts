import { ApiError } from '../errors/api-error.js';

/** Upstream's fixed text for patch failures it reports through NewGenericServerResponse(422). */
export const REJECTED_PATCH_MESSAGE = 'the server rejected our request due to an error in our request';

/**
 * A failed PATCH, carrying the HTTP status and reason kube-apiserver answers
 * with. It is an ApiError, so `status` is the complete metav1.Status to write.
 *
 * Upstream mapping (staging/.../endpoints/handlers/patch.go):
 * - 400 BadRequest: the body does not decode as the patch type expects
 *   (message is the Go decoder's text), a malformed strategic-merge directive.
 * - 413 RequestEntityTooLarge: more than 10000 JSON-patch operations.
 * - 422 Invalid: a JSON-patch operation failed to apply, or a strategic
 *   merge patch hit a list of lists. Upstream builds this with
 *   NewGenericServerResponse, so the Status message is always
 *   REJECTED_PATCH_MESSAGE with empty details; the real cause is in `detail`.
 * - Any other strategic-merge error (unknown `$patch` value, missing merge
 *   key, a directive of the wrong type…): upstream passes it through as a
 *   plain error, which kube-apiserver answers with 500 and no reason. It is
 *   the client's input that is wrong, so Plinth answers 400 BadRequest with
 *   upstream's text (bad input never gets a 500).
 */
export class PatchError extends ApiError {
  /** What actually went wrong, for logs; for 422 upstream keeps it out of the Status. */
  readonly detail: string;

  constructor(code: number, reason: string, message: string, detail: string = message) {
    super(code, reason, message);
    this.name = 'PatchError';
    this.detail = detail;
    if (reason === '') delete this.status.reason;
  }

  /** The Status reason ('' for upstream's StatusReasonUnknown). */
  get reason(): string {
    return this.status.reason ?? '';
  }

  /** 400 BadRequest with `message` as the Status message. */
  static malformed(message: string): PatchError {
    return new PatchError(400, 'BadRequest', message);
  }

  /** 422 Invalid with upstream's generic message and `details: {}`; `detail` keeps the cause. */
  static rejected(detail: string): PatchError {
    const err = new PatchError(422, 'Invalid', REJECTED_PATCH_MESSAGE, detail);
    err.status.details = {};
    return err;
  }

  /** 413 for a JSON patch with more operations than upstream allows. */
  static tooManyOperations(max: number, got: number): PatchError {
    const text = `The allowed maximum operations in a JSON patch is ${max}, got ${got}`;
    return new PatchError(413, 'RequestEntityTooLarge', `Request entity too large: ${text}`, text);
  }

  /** A strategic-merge error upstream does not classify (it answers 500): 400 BadRequest with upstream's text. */
  static unhandled(message: string): PatchError {
    return new PatchError(400, 'BadRequest', message);
  }

  /** Strategic merge: a value of the wrong JSON type where a map or list was required (400). */
  static badArgType(expectedGoType: string, actual: unknown): PatchError {
    return PatchError.unhandled(`expected a ${expectedGoType}, but received a ${goTypeName(actual) || '%!s(<nil>)'}`);
  }

  /** Strategic merge: a merging-list element without its merge key (400). */
  static noMergeKey(element: Record<string, unknown>, mergeKey: string): PatchError {
    return PatchError.unhandled(`map: ${goFormat(element)} does not contain declared merge key: ${mergeKey}`);
  }

  /** Strategic merge: a `$patch` value the position does not support (400). */
  static unknownPatchType(directive: unknown, element: Record<string, unknown>): PatchError {
    return PatchError.unhandled(`unknown patch type: ${goFormat(directive, true)} in map: ${goFormat(element)}`);
  }
}

/**
 * The name Go's encoding/json uses for a JSON value in UnmarshalTypeError
 * ("object", "array", "string", "number", "bool"); 'null' for null.
 */
export function goJsonKind(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'object') return 'object';
  if (typeof v === 'boolean') return 'bool';
  return typeof v;
}

/**
 * The Go type name a decoded JSON value has upstream (integers decode as
 * int64, other numbers as float64); '' for null, which has no type.
 */
export function goTypeName(v: unknown): string {
  if (v === null || v === undefined) return '';
  if (Array.isArray(v)) return '[]interface {}';
  if (typeof v === 'object') return 'map[string]interface {}';
  if (typeof v === 'number') return Number.isInteger(v) ? 'int64' : 'float64';
  if (typeof v === 'boolean') return 'bool';
  return 'string';
}

function goNumber(n: number): string {
  if (Number.isInteger(n) && Math.abs(n) < 2 ** 63) return BigInt(n).toString();
  if (!Number.isFinite(n)) return n > 0 ? '+Inf' : n < 0 ? '-Inf' : 'NaN';
  // Go's %v of a float64 is strconv 'g' with shortest digits: exponent form when the exponent is < -4 or >= 6.
  const [mant, e] = n.toExponential().split('e');
  const exp = Number(e);
  if (exp >= -4 && exp < 6) return String(n);
  return `${mant}e${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`;
}

/**
 * Renders a decoded JSON value the way Go's `%v` does (maps as
 * `map[k:v ...]` with sorted keys, slices as `[a b]`, null as `<nil>`), so
 * error texts that embed values read like upstream's. `verbS` renders as
 * `%s` would: non-strings become `%!s(type=value)`.
 */
export function goFormat(v: unknown, verbS = false): string {
  if (v === null || v === undefined) return verbS ? '%!s(<nil>)' : '<nil>';
  if (Array.isArray(v)) return `[${v.map((e) => goFormat(e, verbS)).join(' ')}]`;
  if (typeof v === 'object') {
    const rec = v as Record<string, unknown>;
    const keys = Object.keys(rec).sort();
    return `map[${keys.map((k) => `${k}:${goFormat(rec[k], verbS)}`).join(' ')}]`;
  }
  if (typeof v === 'string') return v;
  const plain = typeof v === 'number' ? goNumber(v) : String(v);
  return verbS ? `%!s(${goTypeName(v)}=${plain})` : plain;
}
