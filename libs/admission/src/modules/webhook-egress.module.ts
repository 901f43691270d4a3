import type { AdmissionAttributes, AdmissionOperation } from '../admission-attributes.js';
import { AdmissionError } from '../admission-error.js';
import type { AdmissionModule } from '../admission-module.js';
import { EgressRefusedError, type WebhookEgressPolicy } from '../webhook/egress-policy.js';

const CONFIGURATIONS = new Set(['mutatingwebhookconfigurations', 'validatingwebhookconfigurations']);

/**
 * WebhookEgress (Plinth's own plugin): refuses, with 422 and a field cause
 * per offending webhook, a Mutating- or ValidatingWebhookConfiguration whose
 * `clientConfig.url` the platform's egress policy forbids for the tenant
 * (a literal loopback, link-local or own address, or `localhost`). Names
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
    if (attrs.resource.group !== 'admissionregistration.k8s.io' || !CONFIGURATIONS.has(attrs.resource.resource) || attrs.subresource) return;
    const webhooks = (attrs.object as { webhooks?: unknown } | null)?.webhooks;
    if (!Array.isArray(webhooks)) return;
    const errors: Array<{ field: string; reason: string; detail: string }> = [];
    webhooks.forEach((w, i) => {
      const url = (w as { clientConfig?: { url?: unknown } } | null)?.clientConfig?.url;
      if (typeof url !== 'string') return;
      let hostname: string;
      try {
        hostname = new URL(url).hostname;
      } catch {
        return; // a malformed URL is the strategy's error
      }
      const refusal = this.policy.hostRefusal(attrs.tenant, hostname);
      if (refusal) errors.push({ field: `webhooks[${i}].clientConfig.url`, reason: 'FieldValueForbidden', detail: `Forbidden: ${new EgressRefusedError(refusal).message}` });
    });
    if (errors.length > 0) throw AdmissionError.invalid(attrs.resource.group, attrs.kind.kind, attrs.name, errors);
  }
}
