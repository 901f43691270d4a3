import { randomUUID } from 'node:crypto';
import {
  httpErrorText,
  opaqueHttpErrorText,
  resolveWebhookTarget,
  type ServiceResolver,
  type WebhookClient,
  type WebhookClientConfigLike,
  type WebhookEgressPolicy,
  type WebhookTarget,
  WebhookTargetError,
  WebhookTransportError,
} from '@plinth/admission';
import type { KubeObject } from '@plinth/apimachinery';
import type { Logger } from 'pino';
import type { ConversionMetricsSink } from './conversion-metrics.js';
import { buildConversionReview, checkConvertedObjects, ConversionError, convertedObjectsOf, reviewVersionOf } from './conversion-review.js';

/** upstream's conversion webhook client timeout (its REST client's, not configurable per CRD). */
export const CONVERSION_TIMEOUT_SECONDS = 30;

/** A CRD's conversion webhook, as compiled from `spec.conversion.webhook`. */
export interface ConversionWebhookSpec {
  /** The CRD's name, for metrics and logs. */
  crd: string;
  clientConfig: WebhookClientConfigLike;
  conversionReviewVersions: string[];
}

/** One conversion: `objects` (none already in `desiredAPIVersion`) of one tenant, named `gvk` in messages. */
export interface ConversionCall {
  tenant: string;
  hook: ConversionWebhookSpec;
  objects: KubeObject[];
  desiredAPIVersion: string;
  /** upstream's name of the input: `example.com/v1, Kind=Widget` (a list: its list kind). */
  gvk: string;
  list: boolean;
}

/** What calling conversion webhooks needs: the admission webhooks' HTTPS client, service map and egress policy. */
export interface ConversionWebhookDependencies {
  client: WebhookClient;
  services: ServiceResolver;
  /** Where tenants' webhook URLs may point; unset: anywhere. */
  egress?: WebhookEgressPolicy;
  metrics?: ConversionMetricsSink;
  logger?: Pick<Logger, 'warn'>;
  /** Per-call deadline; default {@link CONVERSION_TIMEOUT_SECONDS}. */
  timeoutSeconds?: number;
}

/**
 * Calls CRD conversion webhooks with ConversionReview (v1 or v1beta1, the
 * first of the CRD's conversionReviewVersions Plinth speaks) over the
 * admission webhooks' client: TLS verified against the caBundle, a hard
 * deadline, the egress policy for tenants' URLs, services through the
 * service map. Checks the answer as upstream and records one metrics
 * observation per call. Stateless apart from the client's pools.
 */
export class ConversionWebhookCaller {
  private readonly timeoutSeconds: number;

  constructor(private readonly deps: ConversionWebhookDependencies) {
    this.timeoutSeconds = deps.timeoutSeconds ?? CONVERSION_TIMEOUT_SECONDS;
  }

  /** The converted objects, in order, metadata restored from the originals. Throws ConversionError with upstream's message. */
  async convert(call: ConversionCall): Promise<KubeObject[]> {
    if (call.objects.length === 0) return [];
    const started = process.hrtime.bigint();
    let code: number | undefined;
    const observe = (failure?: 'timeout' | 'transport' | 'response' | 'config' | 'invalid') =>
      this.deps.metrics?.observe({
        tenant: call.tenant,
        crd: call.hook.crd,
        toVersion: call.desiredAPIVersion.slice(call.desiredAPIVersion.indexOf('/') + 1),
        objects: call.objects.length,
        seconds: Number(process.hrtime.bigint() - started) / 1e9,
        code,
        failure,
      });
    try {
      const answered = await this.exchange(call, (c) => (code = c));
      const converted = checkConvertedObjects(call.objects, answered, call.desiredAPIVersion, call.gvk, call.list);
      observe();
      return converted;
    } catch (err) {
      const failure = err instanceof CallFailure ? err.kind : 'invalid';
      observe(failure);
      this.deps.logger?.warn({ tenant: call.tenant, crd: call.hook.crd, err: (err as Error).message }, 'conversion webhook failed');
      if (err instanceof CallFailure) throw new ConversionError(`conversion webhook for ${call.gvk} failed: ${err.message}`);
      throw err;
    }
  }

  /** Closes the client's connection pools (server shutdown). */
  async close(): Promise<void> {
    await this.deps.client.close();
  }

  private async exchange(call: ConversionCall, onStatus: (code: number) => void): Promise<unknown[]> {
    const version = reviewVersionOf(call.hook.conversionReviewVersions);
    if (!version) throw new CallFailure('no supported conversion review versions', 'config');
    let target: WebhookTarget;
    try {
      target = resolveWebhookTarget(call.hook.clientConfig, call.tenant, this.deps, this.timeoutSeconds);
    } catch (err) {
      if (err instanceof WebhookTargetError) throw new CallFailure(err.message, 'config');
      throw err;
    }
    const uid = randomUUID();
    const body = JSON.stringify(buildConversionReview(version, uid, call.desiredAPIVersion, call.objects));
    let status: number;
    let text: string;
    try {
      ({ status, body: text } = await this.deps.client.post(target, body, this.timeoutSeconds * 1000));
    } catch (err) {
      if (!(err instanceof WebhookTransportError)) throw err;
      throw new CallFailure(`Post "${target.url.href}": ${err.message}`, err.kind);
    }
    onStatus(status);
    const opaque = target.egress !== undefined && !target.egress.policy.trusts(call.tenant);
    if (status < 200 || status > 299) throw new CallFailure(opaque ? opaqueHttpErrorText(status) : httpErrorText(status, text), 'response');
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (err) {
      throw new CallFailure(`couldn't get version/kind; json parse error: ${opaque ? 'the response is not JSON' : (err as Error).message}`, 'response');
    }
    try {
      return convertedObjectsOf(version, uid, parsed);
    } catch (err) {
      throw new CallFailure((err as Error).message, 'response');
    }
  }
}

/** A failed call (before the objects are checked), with its metrics reason. */
class CallFailure extends Error {
  constructor(
    message: string,
    readonly kind: 'timeout' | 'transport' | 'response' | 'config',
  ) {
    super(message);
  }
}
