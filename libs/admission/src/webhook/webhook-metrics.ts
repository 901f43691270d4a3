import type { CallFailureKind } from './webhook-errors.js';

/** One finished webhook call, as the metrics see it. */
export interface WebhookCallObservation {
  tenant: string;
  webhook: string;
  /** `admit` (mutating) or `validating`, as upstream's metric label. */
  type: 'admit' | 'validating';
  operation: string;
  seconds: number;
  /** allowed: answered and allowed; rejected: denied by the webhook; failed: the call failed. */
  outcome: 'allowed' | 'rejected' | 'failed';
  /** The HTTP status of the answer, when there was one. */
  code?: number;
  /** Set for failed calls. */
  failure?: CallFailureKind;
  /** For failed calls: whether failurePolicy Ignore let the request through. */
  ignored?: boolean;
}

/** Where the webhook modules report calls (Prometheus in the server, nothing in tests). */
export interface WebhookMetricsSink {
  observe(o: WebhookCallObservation): void;
}

/** A sink that drops everything. */
export const noWebhookMetrics: WebhookMetricsSink = { observe: () => undefined };
