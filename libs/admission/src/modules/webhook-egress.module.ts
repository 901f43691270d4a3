import type { AdmissionAttributes, AdmissionOperation } from '../admission-attributes.js';
import { AdmissionError } from '../admission-error.js';
import type { AdmissionModule } from '../admission-module.js';
import { EgressRefusedError, type WebhookEgressPolicy } from '../webhook/egress-policy.js';

const CONFIGURATIONS = new Set(['mutatingwebhookconfigurations', 'validatingwebhookconfigurations']);

/**
 * WebhookEgress (Plinth's own plugin): refuses, with 422 and a field cause
 * per offending webhook, a Mutating- or ValidatingWebhookConfiguration whose
 * `clientConfig.url` the platform's egress policy forbids for the tenant
 * (a literal loopback, link-local or own address, or `localhost`), and a
 * CustomResourceDefinition whose conversion webhook URL it forbids, and a
 * TenantAuthorizationWebhook (authorization.plinth.dev) whose URL it forbids. Names
 * that resolve to such addresses are refused again at call time.
 */
export class WebhookEgressModule implements AdmissionModule {
  static readonly NAME = 'WebhookEgress';
  readonly name = WebhookEgressModule.NAME;

  constructor(private readonly policy: WebhookEgressPolicy) {}

  handles(op: AdmissionOperation): boolean {
    return op === 'CREATE' || op === 'UPDATE';
  }

  async validate(attrs: AdmissionAttributes): Promise<void> {
    if (attrs.subresource) return;
    const urls = webhookUrls(attrs);
    const errors: Array<{ field: string; reason: string; detail: string }> = [];
    for (const { field, url } of urls) {
      let hostname: string;
      try {
        hostname = new URL(url).hostname;
      } catch {
        continue; // a malformed URL is the strategy's error
      }
      const refusal = this.policy.hostRefusal(attrs.tenant, hostname);
      if (refusal) errors.push({ field, reason: 'FieldValueForbidden', detail: `Forbidden: ${new EgressRefusedError(refusal).message}` });
    }
    if (errors.length > 0) throw AdmissionError.invalid(attrs.resource.group, attrs.kind.kind, attrs.name, errors);
  }
}

/** The webhook URLs an object of a webhook configuration or a CRD (its conversion webhook) names, with their field paths. */
function webhookUrls(attrs: AdmissionAttributes): Array<{ field: string; url: string }> {
  const obj = attrs.object as { webhooks?: unknown; spec?: { conversion?: { webhook?: { clientConfig?: { url?: unknown } } } } } | null;
  if (attrs.resource.group === 'apiextensions.k8s.io' && attrs.resource.resource === 'customresourcedefinitions') {
    const url = obj?.spec?.conversion?.webhook?.clientConfig?.url;
    return typeof url === 'string' ? [{ field: 'spec.conversion.webhook.clientConfig.url', url }] : [];
  }
  if (attrs.resource.group === 'authorization.plinth.dev' && attrs.resource.resource === 'tenantauthorizationwebhooks') {
    const url = (obj?.spec as { clientConfig?: { url?: unknown } } | undefined)?.clientConfig?.url;
    return typeof url === 'string' ? [{ field: 'spec.clientConfig.url', url }] : [];
  }
  if (attrs.resource.group !== 'admissionregistration.k8s.io' || !CONFIGURATIONS.has(attrs.resource.resource)) return [];
  const webhooks = obj?.webhooks;
  if (!Array.isArray(webhooks)) return [];
  return webhooks.flatMap((w, i) => {
    const url = (w as { clientConfig?: { url?: unknown } } | null)?.clientConfig?.url;
    return typeof url === 'string' ? [{ field: `webhooks[${i}].clientConfig.url`, url }] : [];
  });
}
