import { Counter, Histogram, type Registry } from 'prom-client';
import { BoundedLabelSets } from '../../observability/bounded-label-sets.js';

/** Distinct (tenant, CRD) label sets kept before further ones are reported as `_other`. */
export const MAX_CONVERSION_SERIES = 2000;

/** One conversion webhook call, as {@link ConversionMetrics} records it. */
export interface ConversionObservation {
  tenant: string;
  /** The CRD's name (`widgets.example.com`). */
  crd: string;
  /** The version converted to. */
  toVersion: string;
  objects: number;
  seconds: number;
  /** HTTP status of the answer; undefined when there was none. */
  code?: number;
  /** Undefined on success; why the call failed otherwise. */
  failure?: 'timeout' | 'transport' | 'response' | 'config' | 'invalid';
}

/** Where conversion calls are recorded. */
export interface ConversionMetricsSink {
  observe(o: ConversionObservation): void;
}

/**
 * Prometheus metrics of CRD conversion webhooks, like the admission
 * webhooks' (webhook-metrics.ts) and kube-apiserver's
 * apiserver_crd_conversion_webhook_duration_seconds: calls, objects,
 * failures by reason and latency per tenant and CRD. Labels are bounded:
 * tenants name their CRDs, so after {@link MAX_CONVERSION_SERIES} distinct
 * (tenant, CRD) pairs further ones are reported as `_other`; a CRD has few
 * versions and the failure reasons are a fixed set.
 */
export class ConversionMetrics implements ConversionMetricsSink {
  private readonly calls: Counter<'tenant' | 'crd' | 'to_version' | 'code' | 'succeeded'>;
  private readonly objects: Counter<'tenant' | 'crd' | 'to_version'>;
  private readonly failures: Counter<'tenant' | 'crd' | 'reason'>;
  private readonly latency: Histogram<'tenant' | 'crd' | 'to_version' | 'succeeded'>;
  private readonly series = new BoundedLabelSets(MAX_CONVERSION_SERIES);

  /** Registers the metrics on `registry` (one instance per registry). */
  constructor(registry: Registry) {
    this.calls = new Counter({
      name: 'plinth_crd_conversion_webhook_requests_total',
      help: 'CRD conversion webhook calls by tenant, CRD, version converted to, HTTP code (0: no answer) and whether the conversion succeeded.',
      labelNames: ['tenant', 'crd', 'to_version', 'code', 'succeeded'],
      registers: [registry],
    });
    this.objects = new Counter({
      name: 'plinth_crd_conversion_webhook_objects_total',
      help: 'Objects sent to CRD conversion webhooks (a list page is one call for all its objects).',
      labelNames: ['tenant', 'crd', 'to_version'],
      registers: [registry],
    });
    this.failures = new Counter({
      name: 'plinth_crd_conversion_webhook_failures_total',
      help: 'Failed CRD conversion webhook calls by reason (timeout, transport, response, config, invalid: the converted objects failed the checks).',
      labelNames: ['tenant', 'crd', 'reason'],
      registers: [registry],
    });
    this.latency = new Histogram({
      name: 'plinth_crd_conversion_webhook_duration_seconds',
      help: 'CRD conversion webhook call latency (request to checked answer).',
      labelNames: ['tenant', 'crd', 'to_version', 'succeeded'],
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [registry],
    });
  }

  observe(o: ConversionObservation): void {
    const { tenant, crd } = this.series.bound({ tenant: o.tenant, crd: o.crd });
    const base = { tenant, crd, to_version: o.toVersion };
    const succeeded = String(o.failure === undefined);
    this.calls.inc({ ...base, code: String(o.code ?? 0), succeeded });
    this.objects.inc(base, o.objects);
    this.latency.observe({ ...base, succeeded }, o.seconds);
    if (o.failure) this.failures.inc({ tenant, crd, reason: o.failure });
  }
}
