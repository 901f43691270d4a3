import type { AuthorizationAttributes, AuthorizationDecision, Authorizer } from '@plinth/apimachinery';
import { LRUCache } from 'lru-cache';
import type { WebhookAuthorizerConfig } from '../config/authorization-configuration.js';
import { evaluateAuthzConditions } from '../../kinds/authorization/authorization-match-conditions.js';
import type { AuthorizationMetrics } from '../authorization-metrics.js';
import { type SarClient, SarCallError, type SarStatus } from './sar-client.js';
import { subjectAccessReviewBody, subjectAccessReviewSpec } from './subject-access-review.js';

/** Upstream's bound on what a requester controls of a cached key (larger requests are never cached: a DoS guard). */
const MAX_CACHED_ATTRIBUTES = 10_000;
/** Decisions kept per webhook. */
const CACHE_ENTRIES = 8192;

/** What one webhook authorizer needs beyond its configuration. */
export interface WebhookAuthorizerDeps {
  client: SarClient;
  metrics?: AuthorizationMetrics;
  /** The label its metrics carry (the authorizer's name; `tenant` for tenants' webhooks, which would be unbounded). */
  metricName: string;
  /** Keys of the user's `extra` the webhook must not see (another tenant's claims). */
  redactExtra?: (extra: Record<string, string[]>, tenant: string) => Record<string, string[]>;
}

function controlledSize(a: AuthorizationAttributes): number {
  return a.namespace.length + a.verb.length + a.apiGroup.length + a.apiVersion.length + a.resource.length + a.subresource.length + a.name.length + a.path.length;
}

/**
 * Upstream's webhook authorizer (KEP-3221): asks an HTTPS endpoint with a
 * SubjectAccessReview (v1, or v1beta1 as configured) when the webhook's
 * matchConditions hold, and answers allow (`status.allowed`), deny
 * (`status.denied`, which ends the chain) or no opinion. Answers are cached
 * by the review's spec: allowed for `authorizedTTL`, not allowed for
 * `unauthorizedTTL`. A call that fails or outlasts `timeout`, or a
 * matchCondition that errs, decides `failurePolicy` (NoOpinion or Deny)
 * and carries the error (so that a request nothing allows gets a 500, as
 * upstream). Never throws. Answers synchronously from the cache or when a
 * matchCondition skips the webhook.
 */
export class WebhookAuthorizer implements Authorizer {
  private readonly cache = new LRUCache<string, SarStatus>({ max: CACHE_ENTRIES, ttlAutopurge: false });

  constructor(
    readonly config: WebhookAuthorizerConfig,
    private readonly deps: WebhookAuthorizerDeps,
  ) {}

  authorize(attrs: AuthorizationAttributes): AuthorizationDecision | Promise<AuthorizationDecision> {
    const { config, deps } = this;
    const spec = subjectAccessReviewSpec(attrs, deps.redactExtra);
    if (config.matchConditions.length > 0) {
      const outcome = evaluateAuthzConditions(config.matchConditions, spec);
      if ('error' in outcome) {
        deps.metrics?.matchConditionErrors.inc({ type: 'Webhook', name: deps.metricName });
        return this.onError(outcome.error);
      }
      if (!outcome.matches) {
        deps.metrics?.matchConditionExclusions.inc({ type: 'Webhook', name: deps.metricName });
        return { allowed: false, noOpinion: true };
      }
    }
    const key = JSON.stringify(spec);
    const cached = this.cache.get(key);
    if (cached) return decisionOf(cached);
    return this.call(attrs, spec, key);
  }

  private async call(attrs: AuthorizationAttributes, spec: Record<string, unknown>, key: string): Promise<AuthorizationDecision> {
    const { config, deps } = this;
    const started = performance.now();
    let status: SarStatus;
    try {
      status = await deps.client.review(subjectAccessReviewBody(spec, config.subjectAccessReviewVersion), config.timeoutMs);
    } catch (err) {
      const result = err instanceof SarCallError && err.kind === 'timeout' ? 'timeout' : 'error';
      deps.metrics?.webhookEvaluations.inc({ name: deps.metricName, result });
      deps.metrics?.webhookDuration.observe({ name: deps.metricName, result }, (performance.now() - started) / 1000);
      if (config.failurePolicy === 'NoOpinion') deps.metrics?.webhookFailOpen.inc({ name: deps.metricName, result });
      return this.onError(`webhook authorizer ${config.name} failed: ${(err as Error).message}`);
    }
    deps.metrics?.webhookEvaluations.inc({ name: deps.metricName, result: 'success' });
    deps.metrics?.webhookDuration.observe({ name: deps.metricName, result: 'success' }, (performance.now() - started) / 1000);
    const ttl = status.allowed ? config.authorizedTtlMs : config.unauthorizedTtlMs;
    // A TTL of 0 is a cache switched off (cacheAuthorizedRequests / cacheUnauthorizedRequests: false), not "forever".
    if (ttl > 0 && controlledSize(attrs) < MAX_CACHED_ATTRIBUTES) this.cache.set(key, status, { ttl });
    return decisionOf(status);
  }

  private onError(error: string): AuthorizationDecision {
    return this.config.failurePolicy === 'Deny' ? { allowed: false, error } : { allowed: false, noOpinion: true, error };
  }

  /** Closes its connections. */
  close(): Promise<void> {
    return this.deps.client.close();
  }
}

function decisionOf(s: SarStatus): AuthorizationDecision {
  if (s.allowed && s.denied) return { allowed: false, reason: s.reason, error: 'webhook subject access review returned both allow and deny response' };
  if (s.denied) return { allowed: false, reason: s.reason };
  if (s.allowed) return { allowed: true, reason: s.reason };
  return { allowed: false, noOpinion: true, reason: s.reason };
}
