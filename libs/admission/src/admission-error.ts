/** Details of an admission rejection, shaped like a metav1.Status. */
export interface AdmissionErrorStatus {
  code: number;
  reason: string;
  message: string;
  details?: { name?: string; group?: string; kind?: string; causes?: Array<{ reason?: string; message?: string; field?: string }> };
}

/**
 * Thrown by admission modules to reject a request. The HTTP layer sends
 * `status` to the client as a Status object with HTTP code `status.code`.
 */
export class AdmissionError extends Error {
  constructor(readonly status: AdmissionErrorStatus) {
    super(status.message);
  }

  /** 403 Forbidden about `resource "name"` (upstream's NewForbidden). */
  static forbidden(group: string, resource: string, name: string, detail: string): AdmissionError {
    const qualified = group ? `${resource}.${group}` : resource;
    return new AdmissionError({
      code: 403,
      reason: 'Forbidden',
      message: `${qualified} "${name}" is forbidden: ${detail}`,
      details: { name, group: group || undefined, kind: resource },
    });
  }

  /** 500 InternalError as upstream's NewInternalError: `Internal error occurred: <detail>`, the detail as the one cause. */
  static internal(detail: string): AdmissionError {
    return new AdmissionError({
      code: 500,
      reason: 'InternalError',
      message: `Internal error occurred: ${detail}`,
      details: { causes: [{ message: detail }] },
    });
  }

  /** 400 BadRequest with `message` as is (upstream's NewBadRequest). */
  static badRequest(message: string): AdmissionError {
    return new AdmissionError({ code: 400, reason: 'BadRequest', message });
  }

  /**
   * 422 Invalid as upstream's NewInvalid: `<Kind>.<group> "name" is invalid:
   * <field>: <detail>` (several errors in brackets), one cause per error.
   */
  static invalid(group: string, kind: string, name: string, errors: Array<{ field: string; reason: string; detail: string }>): AdmissionError {
    const qualified = group ? `${kind}.${group}` : kind;
    const texts = errors.map((e) => `${e.field}: ${e.detail}`);
    return new AdmissionError({
      code: 422,
      reason: 'Invalid',
      message: `${qualified} "${name}" is invalid: ${texts.length === 1 ? texts[0] : `[${texts.join(', ')}]`}`,
      details: { name, group: group || undefined, kind, causes: errors.map((e) => ({ reason: e.reason, message: e.detail, field: e.field })) },
    });
  }

  /** 404 NotFound about `resource "name"`. */
  static notFound(group: string, resource: string, name: string): AdmissionError {
    const qualified = group ? `${resource}.${group}` : resource;
    return new AdmissionError({
      code: 404,
      reason: 'NotFound',
      message: `${qualified} "${name}" not found`,
      details: { name, group: group || undefined, kind: resource },
    });
  }
}
