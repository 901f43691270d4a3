import { Counter, Histogram, type Registry } from 'prom-client';
import type { WebhookCallObservation, WebhookMetricsSink } from '@plinth/admission';
import { BoundedLabelSets } from '../observability/bounded-label-sets.js';

/** Distinct (tenant, webhook) label sets kept before further ones are reported as `_other`. */
export const MAX_WEBHOOK_SERIES = 2000;

/**
 * Per-webhook Prometheus metrics (names follow kube-apiserver's
 * apiserver_admission_webhook_* with Plinth's prefix and a tenant label):
 * calls, rejections, call failures (and whether they failed open) and
 * call latency. Tenants name their webhooks, so after
 * {@link MAX_WEBHOOK_SERIES} distinct (tenant, webhook) pairs further ones
 * are reported as `_other`.
 */
export class PrometheusWebhookMetrics implements WebhookMetricsSink {
  private readonly calls: Counter<'tenant' | 'name' | 'type' | 'operation' | 'code' | 'rejected'>;
  private readonly rejections: Counter<'tenant' | 'name' | 'type' | 'operation' | 'error_type'>;
  private readonly failures: Counter<'tenant' | 'name' | 'type' | 'operation' | 'reason' | 'fail_open'>;
  private readonly latency: Histogram<'tenant' | 'name' | 'type' | 'operation' | 'rejected'>;
  private readonly series = new BoundedLabelSets(MAX_WEBHOOK_SERIES);

  /** Registers the metrics on `registry` (one instance per registry). */
  constructor(registry: Registry) {
    this.calls = new Counter({
      name: 'plinth_admission_webhook_requests_total',
      help: 'Admission webhook calls by tenant, webhook, type (admit/validating), operation, HTTP code (0: no answer) and whether the request was rejected.',
      labelNames: ['tenant', 'name', 'type', 'operation', 'code', 'rejected'],
      registers: [registry],
    });
    this.rejections = new Counter({
      name: 'plinth_admission_webhook_rejections_total',
      help: 'Requests rejected by an admission webhook: error_type no_error (the webhook denied) or calling_webhook_error (a failed call under failurePolicy Fail).',
      labelNames: ['tenant', 'name', 'type', 'operation', 'error_type'],
      registers: [registry],
    });
    this.failures = new Counter({
      name: 'plinth_admission_webhook_failures_total',
      help: 'Failed admission webhook calls by reason (timeout, transport, response, config) and whether failurePolicy Ignore let the request through (fail_open).',
      labelNames: ['tenant', 'name', 'type', 'operation', 'reason', 'fail_open'],
      registers: [registry],
    });
    this.latency = new Histogram({
      name: 'plinth_admission_webhook_duration_seconds',
      help: 'Admission webhook call latency (request to verified answer).',
      labelNames: ['tenant', 'name', 'type', 'operation', 'rejected'],
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [registry],
    });
  }

  observe(o: WebhookCallObservation): void {
    const { tenant, name } = this.series.bound({ tenant: o.tenant, name: o.webhook });
    const base = { tenant, name, type: o.type, operation: o.operation };
    const rejected = o.outcome === 'rejected' || (o.outcome === 'failed' && !o.ignored);
    this.calls.inc({ ...base, code: String(o.code ?? 0), rejected: String(rejected) });
    this.latency.observe({ ...base, rejected: String(rejected) }, o.seconds);
    if (o.outcome === 'rejected') this.rejections.inc({ ...base, error_type: 'no_error' });
    if (o.outcome === 'failed') {
      this.failures.inc({ ...base, reason: o.failure ?? 'transport', fail_open: String(!!o.ignored) });
      if (!o.ignored) this.rejections.inc({ ...base, error_type: 'calling_webhook_error' });
    }
  }
}
