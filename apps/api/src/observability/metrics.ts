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

  constructor(defaultMetrics = true) {
    if (defaultMetrics) collectDefaultMetrics({ register: this.registry, prefix: 'plinth_' });
  }
}
