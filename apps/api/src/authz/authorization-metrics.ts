import { Counter, Histogram, type Registry } from 'prom-client';
import { ConfigReloadMetrics } from '../observability/config-reload-metrics.js';

/**
 * Upstream's metrics of structured authorization (KEP-3221): decisions by
 * authorizer, webhook calls, matchConditions, and the automatic reload of
 * the configuration file. Tenants' webhooks count under the name `tenant`
 * (a label per tenant would be unbounded).
 */
export class AuthorizationMetrics {
  readonly decisions: Counter<'type' | 'name' | 'decision'>;
  readonly webhookEvaluations: Counter<'name' | 'result'>;
  readonly webhookFailOpen: Counter<'name' | 'result'>;
  readonly webhookDuration: Histogram<'name' | 'result'>;
  readonly matchConditionErrors: Counter<'type' | 'name'>;
  readonly matchConditionExclusions: Counter<'type' | 'name'>;
  /** The configuration file's automatic reloads. */
  readonly reload: ConfigReloadMetrics;

  constructor(registry: Registry) {
    const registers = [registry];
    this.decisions = new Counter({
      name: 'apiserver_authorization_decisions_total',
      help: 'Total number of terminal decisions made by an authorizer split by authorizer type, name, and decision.',
      labelNames: ['type', 'name', 'decision'],
      registers,
    });
    this.webhookEvaluations = new Counter({
      name: 'apiserver_authorization_webhook_evaluations_total',
      help: 'Round-trips to authorization webhooks.',
      labelNames: ['name', 'result'],
      registers,
    });
    this.webhookFailOpen = new Counter({
      name: 'apiserver_authorization_webhook_evaluations_fail_open_total',
      help: 'NoOpinion results due to webhook timeout or error.',
      labelNames: ['name', 'result'],
      registers,
    });
    this.webhookDuration = new Histogram({
      name: 'apiserver_authorization_webhook_duration_seconds',
      help: 'Request latency in seconds.',
      labelNames: ['name', 'result'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    });
    this.matchConditionErrors = new Counter({
      name: 'apiserver_authorization_match_condition_evaluation_errors_total',
      help: 'Total number of errors when an authorization webhook encounters a match condition error split by authorizer type and name.',
      labelNames: ['type', 'name'],
      registers,
    });
    this.matchConditionExclusions = new Counter({
      name: 'apiserver_authorization_match_condition_exclusions_total',
      help: 'Total number of exclusions when an authorization webhook is skipped by match conditions, split by authorizer type and name.',
      labelNames: ['type', 'name'],
      registers,
    });
    this.reload = new ConfigReloadMetrics(registry, 'authorization');
  }
}
