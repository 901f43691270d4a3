import { randomUUID } from 'node:crypto';
import type { AdmissionAttributes } from '../admission-attributes.js';
import type { AdmissionSpan, AdmissionTracer } from '../admission-tracer.js';
import { buildAdmissionReview, type InvocationTarget, type VerifiedResponse, verifyAdmissionResponse } from './admission-review.js';
import type { CompiledWebhook } from './compiled-webhook.js';
import type { WebhookEgressPolicy } from './egress-policy.js';
import { WebhookClient, type WebhookTarget, WebhookTransportError } from './webhook-client.js';
import { dryRunUnsupported, WebhookCallError, webhookRejection } from './webhook-errors.js';
import { noWebhookMetrics, type WebhookMetricsSink } from './webhook-metrics.js';
import { ServiceResolver } from './service-resolver.js';
import { resolveWebhookTarget, WebhookTargetError } from './webhook-target.js';

/** The part of a pino logger the webhook modules use. */
export interface WebhookLogger {
  warn(obj: object, msg: string): void;
}

/** What calling webhooks needs; shared by both webhook modules. */
export interface WebhookCallDependencies {
  client: WebhookClient;
  services: ServiceResolver;
  /** Where tenants' webhook URLs may point; unset: anywhere (no check). */
  egress?: WebhookEgressPolicy;
  metrics?: WebhookMetricsSink;
  logger?: WebhookLogger;
  /** One span per call (`Call mutating webhook`, `Call validating webhook`), its context sent as `traceparent`; unset, none. */
  tracer?: AdmissionTracer;
}

/** A webhook call's span attributes, as upstream's (the tracer adds the tenant's shard). */
function callAttributes(hook: CompiledWebhook, attrs: AdmissionAttributes): Record<string, string> {
  const r = attrs.resource;
  return {
    tenant: attrs.tenant,
    configuration: hook.configurationName,
    webhook: hook.name,
    resource: `${r.group}/${r.version}, Resource=${r.resource}`,
    subresource: attrs.subresource,
    operation: attrs.operation,
  };
}

/** Go's rest-client texts for HTTP errors without a Status body. */
const HTTP_ERROR_TEXTS: Record<number, string> = {
  400: 'the server rejected our request for an unknown reason',
  401: 'the server has asked for the client to provide credentials',
  403: 'the server does not allow access to the requested resource',
  404: 'the server could not find the requested resource',
  405: 'the server does not allow this method on the requested resource',
  409: 'the server reported a conflict',
  429: 'the server has received too many requests and has asked us to try again later',
  503: 'the server is currently unable to handle the request',
  504: 'the server was unable to return a response in the time allotted, but may still be processing the request',
};

/** What an untrusted tenant learns of an HTTP error: the status only, never the remote body. */
export function opaqueHttpErrorText(status: number): string {
  return HTTP_ERROR_TEXTS[status] ?? `the webhook answered with HTTP status ${status}`;
}

/** What a non-2xx webhook answer is reported as: its Status message, Go's rest-client text for the code, or the start of the body. */
export function httpErrorText(status: number, body: string): string {
  try {
    const parsed = JSON.parse(body) as { kind?: string; message?: string };
    if (parsed?.kind === 'Status' && typeof parsed.message === 'string' && parsed.message) return parsed.message;
  } catch {
    // not a Status
  }
  const known = HTTP_ERROR_TEXTS[status];
  if (known) return known;
  const shown = body.length > 100 ? `${body.slice(0, 100)}…` : body;
  return `an error on the server (${JSON.stringify(shown || 'unknown')}) has prevented the request from succeeding`;
}

/**
 * Performs one webhook call end to end: dry-run gate, endpoint resolution
 * (url, or service through the service map), the AdmissionReview POST with
 * `?timeout=Ns` and a hard deadline, response verification, warnings, and
 * the denial. Records one metrics observation per call.
 */
export class WebhookInvoker {
  private readonly metrics: WebhookMetricsSink;

  constructor(private readonly deps: WebhookCallDependencies) {
    this.metrics = deps.metrics ?? noWebhookMetrics;
  }

  /**
   * Calls `hook` and returns its verified allowed response. Throws
   * AdmissionError for a denial (or an unsupported dry run), and
   * WebhookCallError for a call failure (the caller applies failurePolicy).
   */
  async call(
    hook: CompiledWebhook,
    target: InvocationTarget,
    attrs: AdmissionAttributes,
    objects: { object: unknown; oldObject: unknown },
    warnings: string[],
  ): Promise<VerifiedResponse> {
    if (attrs.dryRun) {
      if (hook.sideEffects === undefined) throw new WebhookCallError(hook.name, 'Webhook SideEffects is nil', 'config');
      if (hook.sideEffects !== 'None' && hook.sideEffects !== 'NoneOnDryRun') throw dryRunUnsupported(hook.name);
    }
    const started = process.hrtime.bigint();
    const type = hook.kind === 'mutating' ? 'admit' : 'validating';
    const observe = (outcome: 'allowed' | 'rejected' | 'failed', extra: { code?: number; failure?: WebhookCallError['kind'] } = {}) =>
      this.metrics.observe({
        tenant: attrs.tenant,
        webhook: hook.name,
        type,
        operation: attrs.operation,
        seconds: Number(process.hrtime.bigint() - started) / 1e9,
        outcome,
        ignored: outcome === 'failed' ? hook.failurePolicy === 'Ignore' : undefined,
        ...extra,
      });
    let code: number | undefined;
    try {
      const exchange = (span: AdmissionSpan | undefined) => this.exchange(hook, target, attrs, objects, (c) => (code = c), span);
      const response = this.deps.tracer ? await this.deps.tracer.step(`Call ${hook.kind} webhook`, callAttributes(hook, attrs), exchange) : await exchange(undefined);
      for (const w of response.warnings) warnings.push(w);
      if (!response.allowed) {
        observe('rejected', { code });
        throw webhookRejection(attrs, hook.name, response.result);
      }
      observe('allowed', { code });
      return response;
    } catch (err) {
      if (err instanceof WebhookCallError) {
        observe('failed', { code, failure: err.kind });
        this.deps.logger?.warn({ webhook: hook.name, tenant: attrs.tenant, failurePolicy: hook.failurePolicy, err: err.message }, 'webhook call failed');
      }
      throw err;
    }
  }

  private endpoint(hook: CompiledWebhook, attrs: AdmissionAttributes): WebhookTarget {
    try {
      return resolveWebhookTarget(hook.spec.clientConfig ?? {}, attrs.tenant, this.deps, hook.timeoutSeconds);
    } catch (err) {
      if (err instanceof WebhookTargetError) throw new WebhookCallError(hook.name, err.message, 'config');
      throw err;
    }
  }

  private async exchange(
    hook: CompiledWebhook,
    target: InvocationTarget,
    attrs: AdmissionAttributes,
    objects: { object: unknown; oldObject: unknown },
    onStatus: (code: number) => void,
    span: AdmissionSpan | undefined,
  ): Promise<VerifiedResponse> {
    const mutating = hook.kind === 'mutating';
    const version = hook.reviewVersion;
    if (!version) {
      throw new WebhookCallError(hook.name, 'could not create admission objects: webhook does not accept known AdmissionReview versions (v1, v1beta1)', 'config');
    }
    const endpoint = this.endpoint(hook, attrs);
    const uid = randomUUID();
    span?.setAttribute('UID', uid);
    const body = JSON.stringify(buildAdmissionReview(version, uid, attrs, target, objects.object, objects.oldObject));
    const prefix = mutating ? 'failed to call webhook: ' : '';
    let status: number;
    let text: string;
    try {
      ({ status, body: text } = await this.deps.client.post(endpoint, body, hook.timeoutSeconds * 1000, span?.propagationHeaders()));
    } catch (err) {
      if (!(err instanceof WebhookTransportError)) throw err;
      throw new WebhookCallError(hook.name, `${prefix}Post "${endpoint.url.href}": ${err.message}`, err.kind);
    }
    onStatus(status);
    const opaque = endpoint.egress !== undefined && !endpoint.egress.policy.trusts(attrs.tenant);
    if (status < 200 || status > 299) throw new WebhookCallError(hook.name, `${prefix}${opaque ? opaqueHttpErrorText(status) : httpErrorText(status, text)}`, 'response');
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (err) {
      const detail = opaque ? 'the response is not JSON' : (err as Error).message;
      throw new WebhookCallError(hook.name, `${prefix}couldn't get version/kind; json parse error: ${detail}`, 'response');
    }
    try {
      return verifyAdmissionResponse(version, uid, mutating, parsed);
    } catch (err) {
      const detail = err instanceof Error ? err.message : String(err);
      throw new WebhookCallError(hook.name, mutating ? `received invalid webhook response: ${detail}` : detail, 'response');
    }
  }
}
