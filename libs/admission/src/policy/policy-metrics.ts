/** One policy evaluation for one binding, as the metrics see it. */
export interface PolicyCheckObservation {
  tenant: string;
  type: 'validating' | 'mutating';
  policy: string;
  binding: string;
  /** deny, warn, audit (validating) or allow (no failed validation / applied mutations). */
  enforcementAction: 'deny' | 'warn' | 'audit' | 'allow';
  /** no_error, compile_error, invalid_error (runtime or configuration error), out_of_budget. */
  errorType: 'no_error' | 'compile_error' | 'invalid_error' | 'out_of_budget';
  seconds: number;
}

/** Receives policy evaluations (Prometheus in the server). */
export interface PolicyMetricsSink {
  observe(o: PolicyCheckObservation): void;
}

/** upstream's ErrorType: what kind of failure a decision message describes. */
export function policyErrorType(evaluation: 'admit' | 'deny' | 'error', message: string): PolicyCheckObservation['errorType'] {
  if (evaluation !== 'error') return 'no_error';
  if (message.startsWith('compilation')) return 'compile_error';
  if (message.startsWith('validation failed due to running out of cost budget')) return 'out_of_budget';
  return 'invalid_error';
}
