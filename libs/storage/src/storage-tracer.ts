import type { ObjectKey } from './object-key.js';

/** The span of one storage operation, as the tracer hands it to the operation. */
export interface StorageSpan {
  /** Adds an attribute (the revision written, the rows read). */
  setAttribute(key: string, value: string | number | boolean): void;
}

/**
 * The tracing hook of the storage (OpenTelemetry in the application; this
 * package knows nothing of it). Unset, operations run untraced at no cost.
 */
export interface StorageTracer {
  /**
   * Runs `run` as the storage operation `operation` (`get`, `create`,
   * `update`, `delete`, `list`) on `key`'s tenant and resource; resolves or
   * rejects as `run` does. The tracer decides whether a span is recorded
   * (the application's records one only under a request's span).
   */
  operation<T>(operation: string, key: Pick<ObjectKey, 'tenant' | 'resource'> & Partial<ObjectKey>, run: (span: StorageSpan | undefined) => Promise<T>): Promise<T>;
}

/** `run` under `tracer` when there is one, else `run` alone (no span, no allocation beyond the call). */
export function traced<T>(
  tracer: StorageTracer | undefined,
  operation: string,
  key: Pick<ObjectKey, 'tenant' | 'resource'> & Partial<ObjectKey>,
  run: (span: StorageSpan | undefined) => Promise<T>,
): Promise<T> {
  return tracer ? tracer.operation(operation, key, run) : run(undefined);
}
