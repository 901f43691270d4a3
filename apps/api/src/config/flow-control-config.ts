import type { EnvironmentVariables } from './environment-variables.dto.js';

/** The flow-control part of AppConfig: seats per tenant and per replica, queues, HTTP/2 streams, validation time (docs/fairness.md). */
export interface FlowControlConfig {
  /** Event-loop time a tenant may spend validating custom resources, ms per second (burst: ten times this). */
  tenantValidationMsPerSecond: number;
  /** Seats executing requests of one tenant occupy at once on a replica (1 to 10 per request, by estimated work), unless its Tenant's spec.limits.concurrentRequests says otherwise. */
  tenantConcurrentRequests: number;
  /** Seats executing requests of all tenants occupy at once on a replica (0: only the per-tenant bound); freed seats go to the waiting tenant with the least virtual time. */
  maxRequestsInflight: number;
  /** Concurrent HTTP/2 streams a client may open on one connection (kube-apiserver's --http2-max-streams-per-connection; 0: its default, 100). */
  http2MaxStreamsPerConnection: number;
  /** Requests of one tenant that may wait for a seat on a replica (beyond: 429 at once). */
  tenantQueueLength: number;
  /** The longest a request waits for a seat before it gets 429. */
  tenantQueueWaitMs: number;
  /**
   * Adaptive replica-wide concurrency: whether the replica-wide seat limit
   * shrinks while the event loop's delay is over `targetDelayMs` and the loop
   * busy for at least `targetUtilization` (0 to 1) of the time, and grows
   * back (by one seat per window) otherwise, between `minSeats` and
   * `maxRequestsInflight` (docs/fairness.md).
   */
  adaptiveConcurrency: { enabled: boolean; minSeats: number; targetDelayMs: number; targetUtilization: number };
}

/** The flow-control settings of the validated environment, defaults filled in. Pure; never throws. */
export function readFlowControlConfig(env: EnvironmentVariables): FlowControlConfig {
  return {
    tenantValidationMsPerSecond: env.PLINTH_TENANT_VALIDATION_MS_PER_SECOND ?? 200,
    tenantConcurrentRequests: env.PLINTH_TENANT_CONCURRENT_REQUESTS ?? 32,
    maxRequestsInflight: env.PLINTH_MAX_REQUESTS_INFLIGHT ?? 64,
    http2MaxStreamsPerConnection: env.PLINTH_HTTP2_MAX_STREAMS_PER_CONNECTION || 100,
    tenantQueueLength: env.PLINTH_TENANT_QUEUE_LENGTH ?? 128,
    tenantQueueWaitMs: env.PLINTH_TENANT_QUEUE_WAIT_MS ?? 10000,
    adaptiveConcurrency: {
      enabled: (env.PLINTH_ADAPTIVE_CONCURRENCY ?? 'on') === 'on',
      minSeats: env.PLINTH_ADAPTIVE_CONCURRENCY_MIN_SEATS ?? 8,
      targetDelayMs: env.PLINTH_ADAPTIVE_CONCURRENCY_TARGET_DELAY_MS ?? 10,
      targetUtilization: (env.PLINTH_ADAPTIVE_CONCURRENCY_TARGET_UTILIZATION ?? 90) / 100,
    },
  };
}
