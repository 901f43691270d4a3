import type { WebhookEgressPolicy } from './egress-policy.js';
import type { ServiceResolver } from './service-resolver.js';
import type { WebhookTarget } from './webhook-client.js';

/**
 * Where a webhook's `clientConfig` points, shared by admission and CRD
 * conversion webhooks: a `url` (checked against the egress policy for the
 * calling tenant), or a `service` through the operator's service map
 * (PLINTH_WEBHOOK_SERVICE_MAP; Plinth has no cluster DNS).
 */

/** A webhook's clientConfig as stored (admissionregistration and apiextensions share its shape). */
export interface WebhookClientConfigLike {
  url?: string | null;
  service?: { namespace: string; name: string; port?: number | null; path?: string | null } | null;
  caBundle?: string | null;
}

/** Why a clientConfig cannot be called (upstream's `could not get REST client: …`). */
export class WebhookTargetError extends Error {}

/**
 * The call target of `cc` for `tenant`, with `?timeout=<s>s` as upstream's
 * REST client adds it. Throws WebhookTargetError for an invalid URL, an
 * unmapped service or a config with neither.
 */
export function resolveWebhookTarget(
  cc: WebhookClientConfigLike,
  tenant: string,
  deps: { services: ServiceResolver; egress?: WebhookEgressPolicy },
  timeoutSeconds: number,
): WebhookTarget {
  let url: URL;
  let servername: string | undefined;
  if (cc.url) {
    try {
      url = new URL(cc.url);
    } catch {
      throw new WebhookTargetError(`could not get REST client: invalid url ${JSON.stringify(cc.url)}`);
    }
  } else if (cc.service) {
    const resolved = deps.services.resolve(tenant, cc.service);
    if (!resolved) {
      const s = cc.service;
      throw new WebhookTargetError(
        `could not get REST client: service "${s.namespace}/${s.name}" port ${s.port ?? 443} has no address: map it in PLINTH_WEBHOOK_SERVICE_MAP (Plinth has no cluster DNS)`,
      );
    }
    url = resolved.url;
    servername = resolved.servername;
  } else {
    throw new WebhookTargetError('could not get REST client: exactly one of url or service is required');
  }
  url.search = `?timeout=${timeoutSeconds}s`;
  const egress = cc.url && deps.egress ? { policy: deps.egress, tenant } : undefined;
  return { url, servername, caBundle: cc.caBundle, egress };
}
