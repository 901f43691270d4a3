/** The span of one admission step, as the tracer hands it to the step. */
export interface AdmissionSpan {
  /** Adds an attribute (a webhook call's UID, known once the call is built). */
  setAttribute(key: string, value: string | number | boolean): void;
  /** The headers that carry this span's context to a server the step calls (W3C `traceparent`); empty when not sampled. */
  propagationHeaders(): Record<string, string>;
}

/**
 * The tracing hook of the admission chain and the webhook calls
 * (OpenTelemetry in the application; this package knows nothing of it).
 * Unset, admission runs untraced at no cost.
 */
export interface AdmissionTracer {
  /**
   * Runs `run` as the step `name` with `attributes`; resolves or rejects as
   * `run` does (a rejection marks the span failed). The tracer decides
   * whether a span is recorded (the application's records one only under
   * a request's span); `run` gets undefined when none is.
   */
  step<T>(name: string, attributes: Record<string, string | number | boolean>, run: (span: AdmissionSpan | undefined) => Promise<T>): Promise<T>;
}
