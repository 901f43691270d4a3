/**
 * The admissionregistration.k8s.io/v1 webhook configuration types as they
 * arrive in JSON, and upstream's v1 defaulting (SetDefaults_*).
 */

/** Which of the two configuration kinds a webhook comes from. */
export type WebhookKind = 'mutating' | 'validating';

/** admissionregistration/v1 RuleWithOperations. */
export interface RuleWithOperationsV1 {
  operations?: string[] | null;
  apiGroups?: string[] | null;
  apiVersions?: string[] | null;
  resources?: string[] | null;
  /** Cluster | Namespaced | `*` (the default). */
  scope?: string | null;
}

/** admissionregistration/v1 ServiceReference. */
export interface ServiceReferenceV1 {
  namespace: string;
  name: string;
  path?: string | null;
  port?: number | null;
}

/** admissionregistration/v1 WebhookClientConfig. */
export interface WebhookClientConfigV1 {
  url?: string | null;
  service?: ServiceReferenceV1 | null;
  /** Base64 of a PEM bundle; empty means the system roots. */
  caBundle?: string | null;
}

/** admissionregistration/v1 MatchCondition. */
export interface MatchConditionV1 {
  name: string;
  expression: string;
}

/** metav1.LabelSelector as JSON. */
export interface LabelSelectorV1 {
  matchLabels?: Record<string, string> | null;
  matchExpressions?: Array<{ key: string; operator: string; values?: string[] | null }> | null;
}

/** One webhook of either kind (`reinvocationPolicy` is mutating only). */
export interface WebhookV1 {
  name: string;
  clientConfig: WebhookClientConfigV1;
  rules?: RuleWithOperationsV1[] | null;
  failurePolicy?: string | null;
  matchPolicy?: string | null;
  namespaceSelector?: LabelSelectorV1 | null;
  objectSelector?: LabelSelectorV1 | null;
  sideEffects?: string | null;
  timeoutSeconds?: number | null;
  admissionReviewVersions?: string[] | null;
  reinvocationPolicy?: string | null;
  matchConditions?: MatchConditionV1[] | null;
}

/** A Mutating- or ValidatingWebhookConfiguration as stored. */
export interface WebhookConfigurationV1 {
  apiVersion?: string;
  kind?: string;
  metadata: { name?: string; uid?: string; resourceVersion?: string; [k: string]: unknown };
  webhooks?: WebhookV1[] | null;
}

/** The API group of the configuration kinds. */
export const ADMISSIONREGISTRATION_GROUP = 'admissionregistration.k8s.io';

/** Default `timeoutSeconds` of v1 webhooks. */
export const DEFAULT_TIMEOUT_SECONDS = 10;

/** Default service port of v1 webhooks. */
export const DEFAULT_SERVICE_PORT = 443;

/** Kinds webhooks are never called for, as upstream's IsExemptAdmissionConfigurationResource. */
const EXEMPT_KINDS = new Set([
  'ValidatingWebhookConfiguration',
  'MutatingWebhookConfiguration',
  'ValidatingAdmissionPolicy',
  'ValidatingAdmissionPolicyBinding',
  'MutatingAdmissionPolicy',
  'MutatingAdmissionPolicyBinding',
]);

/** Whether requests for this group/kind bypass all webhooks (so a bad webhook can always be removed). */
export function isExemptFromWebhooks(group: string, kind: string): boolean {
  return group === ADMISSIONREGISTRATION_GROUP && EXEMPT_KINDS.has(kind);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Applies the admissionregistration/v1 defaults to every webhook of a
 * configuration object in place: failurePolicy Fail, matchPolicy
 * Equivalent, namespaceSelector/objectSelector {}, timeoutSeconds 10,
 * rule scope `*`, service port 443 and (mutating) reinvocationPolicy Never.
 * Values of the wrong shape are left for validation to report.
 */
export function applyWebhookDefaults(obj: Record<string, unknown>, kind: WebhookKind): void {
  if (!Array.isArray(obj.webhooks)) return;
  for (const hook of obj.webhooks) {
    if (!isObject(hook)) continue;
    hook.failurePolicy ??= 'Fail';
    hook.matchPolicy ??= 'Equivalent';
    hook.namespaceSelector ??= {};
    hook.objectSelector ??= {};
    hook.timeoutSeconds ??= DEFAULT_TIMEOUT_SECONDS;
    if (kind === 'mutating') hook.reinvocationPolicy ??= 'Never';
    if (Array.isArray(hook.rules)) {
      for (const rule of hook.rules) if (isObject(rule)) rule.scope ??= '*';
    }
    const cc = hook.clientConfig;
    if (isObject(cc) && isObject(cc.service)) cc.service.port ??= DEFAULT_SERVICE_PORT;
  }
}
