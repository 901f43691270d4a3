import { Counter, Histogram, type Registry } from 'prom-client';
import type { PolicyCheckObservation, PolicyMetricsSink } from '@plinth/admission';
import { BoundedLabelSets } from '../observability/bounded-label-sets.js';

/** Distinct (tenant, policy, binding) label sets kept before further ones are folded into `_other`. */
export const MAX_POLICY_SERIES = 2000;

/**
 * Per-policy and per-binding Prometheus metrics (upstream's
 * apiserver_validating_admission_policy_check_total and _duration_seconds,
 * with Plinth's prefix, a tenant and a type label). Policy and binding
 * names are chosen by tenants, so the number of distinct label sets is
 * bounded: after {@link MAX_POLICY_SERIES} of them, new ones are reported as
 * tenant/policy/binding `_other`.
 */
export class PrometheusPolicyMetrics implements PolicyMetricsSink {
  private readonly checks: Counter<'tenant' | 'type' | 'policy' | 'policy_binding' | 'enforcement_action' | 'error_type'>;
  private readonly latency: Histogram<'tenant' | 'type' | 'policy' | 'policy_binding' | 'enforcement_action' | 'error_type'>;
  private readonly series = new BoundedLabelSets(MAX_POLICY_SERIES);

  /** Registers the metrics on `registry` (one instance per registry). */
  constructor(registry: Registry) {
    this.checks = new Counter({
      name: 'plinth_admission_policy_check_total',
      help: 'Admission policy evaluations by tenant, type (validating/mutating), policy, binding, enforcement action (deny, warn, audit, allow) and error type.',
      labelNames: ['tenant', 'type', 'policy', 'policy_binding', 'enforcement_action', 'error_type'],
      registers: [registry],
    });
    this.latency = new Histogram({
      name: 'plinth_admission_policy_check_duration_seconds',
      help: 'Admission policy evaluation latency per policy and binding.',
      labelNames: ['tenant', 'type', 'policy', 'policy_binding', 'enforcement_action', 'error_type'],
      buckets: [0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25],
      registers: [registry],
    });
  }

  observe(o: PolicyCheckObservation): void {
    const { tenant, policy, binding } = this.series.bound({ tenant: o.tenant, policy: o.policy, binding: o.binding });
    const labels = { tenant, type: o.type, policy, policy_binding: binding, enforcement_action: o.enforcementAction, error_type: o.errorType };
    this.checks.inc(labels);
    this.latency.observe(labels, o.seconds);
  }
}
