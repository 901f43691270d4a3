import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** Prometheus metrics of one server instance (own registry, so several instances can live in one process). */
export class Metrics {
  readonly registry = new Registry();
  readonly requests = new Counter({
    name: 'plinth_http_requests_total',
    help: 'HTTP requests by verb, resource and response code.',
    labelNames: ['verb', 'group', 'resource', 'code'] as const,
    registers: [this.registry],
  });
  readonly latency = new Histogram({
    name: 'plinth_http_request_duration_seconds',
    help: 'HTTP request latency by verb and resource.',
    labelNames: ['verb', 'group', 'resource'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [this.registry],
  });

  /** Time spent authenticating a request (credentials, token checks), as upstream's apiserver_authentication_duration_seconds. */
  readonly authentication = new Histogram({
    name: 'plinth_authentication_duration_seconds',
    help: 'Time spent authenticating requests, by result (success, failure, anonymous).',
    labelNames: ['result'] as const,
    buckets: [0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.05, 0.25],
    registers: [this.registry],
  });
  /** Time spent authorizing a request (impersonation checks included), as upstream's apiserver_authorization_duration_seconds. */
  readonly authorization = new Histogram({
    name: 'plinth_authorization_duration_seconds',
    help: 'Time spent authorizing requests, by decision (allowed, denied, error).',
    labelNames: ['decision'] as const,
    buckets: [0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.05, 0.25],
    registers: [this.registry],
  });

  /** Writes per storage transaction (group commit: concurrent writes share one commit and WAL flush). */
  readonly writeBatchSize = new Histogram({
    name: 'plinth_storage_write_batch_size',
    help: 'Writes committed together in one storage transaction.',
    buckets: [1, 2, 4, 8, 16, 32, 64],
    registers: [this.registry],
  });

  /** Audit events dropped because the log could not keep up (writing never blocks a request). */
  readonly auditDropped = new Counter({
    name: 'plinth_audit_events_dropped_total',
    help: 'Audit events dropped because the audit log could not keep up.',
    registers: [this.registry],
  });

  /** Storage reads of unpaginated lists, one per chunk: a list of N chunks was streamed without being held whole. */
  readonly listChunks = new Counter({
    name: 'plinth_list_chunks_total',
    help: 'Chunks (one SQL statement each, about 1 MiB of objects at most) read by unpaginated lists.',
    registers: [this.registry],
  });

  constructor(defaultMetrics = true) {
    if (defaultMetrics) collectDefaultMetrics({ register: this.registry, prefix: 'plinth_' });
  }
}
