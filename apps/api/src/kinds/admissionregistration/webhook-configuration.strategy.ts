import { applyWebhookDefaults, type WebhookKind } from '@plinth/admission';
import { validateWebhookConfiguration, validateWebhookConfigurationUpdate } from './webhook-configuration.validation.js';
import type { KubeObject } from '@plinth/apimachinery';
import type { ResourceStrategy } from '../../registry/resource-definition.js';

/**
 * Mutating- or ValidatingWebhookConfiguration: the admissionregistration/v1
 * defaults (failurePolicy Fail, matchPolicy Equivalent, selectors {},
 * timeoutSeconds 10, scope *, port 443, reinvocationPolicy Never) are
 * applied on every write, as upstream's decoding defaults them; no status.
 */
function webhookConfigurationStrategy(kind: WebhookKind): ResourceStrategy {
  return {
    prepareForCreate: (obj: KubeObject) => applyWebhookDefaults(obj, kind),
    prepareForUpdate: (obj: KubeObject) => applyWebhookDefaults(obj, kind),
    validate: (obj: KubeObject) => validateWebhookConfiguration(obj, kind),
    validateUpdate: (obj: KubeObject, old: KubeObject) => validateWebhookConfigurationUpdate(obj, old, kind),
    allowCreateOnUpdate: false,
    allowUnconditionalUpdate: true,
  };
}

/** MutatingWebhookConfiguration's strategy. */
export const mutatingWebhookConfigurationStrategy: ResourceStrategy = webhookConfigurationStrategy('mutating');

/** ValidatingWebhookConfiguration's strategy. */
export const validatingWebhookConfigurationStrategy: ResourceStrategy = webhookConfigurationStrategy('validating');
