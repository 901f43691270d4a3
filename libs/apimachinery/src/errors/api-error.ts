import { type FieldError, fieldErrorBody, fieldErrorMessage } from './field-error.js';

/** A `StatusCause` of metav1. */
export interface StatusCause {
  reason?: string;
  message?: string;
  field?: string;
}

/** The `details` of a metav1.Status. */
export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
}

/** A metav1.Status body. */
export interface StatusBody {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: { resourceVersion?: string; continue?: string };
  status: 'Failure' | 'Success';
  message?: string;
  reason?: string;
  details?: StatusDetails;
  code: number;
}

/** Identifies the resource an error is about: `group` is '' for the core group. */
export interface ErrorTarget {
  group: string;
  /** Resource plural (NotFound, Conflict…) or Kind (Invalid), as upstream uses each. */
  kind: string;
  name?: string;
}

/**
 * Builds an error without capturing a stack trace, for refusals given many
 * times a second (a flooding client's 429s), where capturing it is most of
 * the cost of the refusal and nobody reads the stack.
 */
export function withoutStack<T>(make: () => T): T {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return make();
  } finally {
    Error.stackTraceLimit = limit;
  }
}

/**
 * The one error type handlers throw. It carries a complete Status; the HTTP
 * layer writes it unchanged with `code` as the HTTP status.
 */
export class ApiError extends Error {
  readonly status: StatusBody;
  /** Extra response headers, e.g. Retry-After. */
  readonly headers: Record<string, string>;

  constructor(code: number, reason: string, message: string, details?: StatusDetails, headers: Record<string, string> = {}) {
    super(message);
    this.status = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code };
    if (details && Object.keys(details).length > 0) this.status.details = details;
    this.headers = headers;
  }

  get code(): number {
    return this.status.code;
  }

  /** `configmaps "x"` or `widgets.example.com "x"`, as upstream qualifies resources. */
  static qualified(t: ErrorTarget): string {
    const res = t.group ? `${t.kind}.${t.group}` : t.kind;
    return t.name !== undefined ? `${res} "${t.name}"` : res;
  }

  static badRequest(message: string, causes?: StatusCause[]): ApiError {
    return new ApiError(400, 'BadRequest', message, causes ? { causes } : undefined);
  }

  static notFound(t: ErrorTarget): ApiError {
    return new ApiError(404, 'NotFound', `${ApiError.qualified(t)} not found`, {
      name: t.name,
      group: t.group || undefined,
      kind: t.kind,
    });
  }

  static alreadyExists(t: ErrorTarget): ApiError {
    return new ApiError(409, 'AlreadyExists', `${ApiError.qualified(t)} already exists`, {
      name: t.name,
      group: t.group || undefined,
      kind: t.kind,
    });
  }

  static conflict(t: ErrorTarget, detail: string): ApiError {
    return new ApiError(409, 'Conflict', `Operation cannot be fulfilled on ${ApiError.qualified(t)}: ${detail}`, {
      name: t.name,
      group: t.group || undefined,
      kind: t.kind,
    });
  }

  static staleConflict(t: ErrorTarget): ApiError {
    return ApiError.conflict(t, 'the object has been modified; please apply your changes to the latest version and try again');
  }

  static forbidden(t: ErrorTarget, detail: string): ApiError {
    return new ApiError(403, 'Forbidden', `${ApiError.qualified(t)} is forbidden: ${detail}`, {
      name: t.name,
      group: t.group || undefined,
      kind: t.kind,
    });
  }

  /** 422 Invalid; `t.kind` is the Kind (e.g. ConfigMap), as upstream NewInvalid uses it. */
  static invalid(t: ErrorTarget, errs: FieldError[]): ApiError {
    const who = t.group ? `${t.kind}.${t.group}` : t.kind;
    const msgs = errs.map(fieldErrorMessage);
    const joined = msgs.length === 1 ? msgs[0] : `[${msgs.join(', ')}]`;
    return new ApiError(422, 'Invalid', `${who} "${t.name ?? ''}" is invalid: ${joined}`, {
      name: t.name ?? '',
      group: t.group || undefined,
      kind: t.kind,
      causes: errs.map((e) => ({ reason: e.type, message: fieldErrorBody(e), field: e.field })),
    });
  }

  static gone(message: string): ApiError {
    return new ApiError(410, 'Expired', message);
  }

  static methodNotAllowed(message: string): ApiError {
    return new ApiError(405, 'MethodNotAllowed', message);
  }

  static notAcceptable(message: string): ApiError {
    return new ApiError(406, 'NotAcceptable', message);
  }

  static unsupportedMediaType(message: string): ApiError {
    return new ApiError(415, 'UnsupportedMediaType', message);
  }

  static tooLarge(message: string): ApiError {
    return new ApiError(413, 'RequestEntityTooLarge', message);
  }

  static internal(message: string): ApiError {
    return new ApiError(500, 'InternalError', `Internal error occurred: ${message}`, { causes: [{ message }] });
  }

  static timeout(message: string, retryAfterSeconds: number, causes?: StatusCause[]): ApiError {
    return new ApiError(
      504,
      'Timeout',
      message,
      { retryAfterSeconds, causes },
      { 'Retry-After': String(retryAfterSeconds) },
    );
  }

  static serviceUnavailable(message: string): ApiError {
    return new ApiError(503, 'ServiceUnavailable', message);
  }

  /** 503 with `message` and Retry-After (seconds): something this request depends on cannot serve it now. */
  static unavailable(message: string, retryAfterSeconds = 1): ApiError {
    return new ApiError(503, 'ServiceUnavailable', message, { retryAfterSeconds }, { 'Retry-After': String(retryAfterSeconds) });
  }

  /** 503 while the database cannot be reached: the client should retry after a second. */
  static storageUnavailable(): ApiError {
    return new ApiError(
      503,
      'ServiceUnavailable',
      'the storage backend is unavailable; retry the request',
      { retryAfterSeconds: 1 },
      { 'Retry-After': '1' },
    );
  }
}
