import { type LabelSelector, labelSelectorFromMetav1 } from '@plinth/apimachinery';
import { type CompiledCondition, compileMatchConditions } from './match-conditions.js';
import {
  applyWebhookDefaults,
  DEFAULT_TIMEOUT_SECONDS,
  type LabelSelectorV1,
  type RuleWithOperationsV1,
  type WebhookConfigurationV1,
  type WebhookKind,
  type WebhookV1,
} from './webhook-configuration.js';

/** A parsed selector, or the reason it cannot be parsed (reported only when the webhook's rules match). */
export type ParsedSelector = { selector: LabelSelector; empty: boolean } | { error: string };

/** One webhook ready for matching and calling: defaults applied, selectors parsed, conditions compiled. */
export interface CompiledWebhook {
  kind: WebhookKind;
  /** Unique within the tenant and kind: `<configuration>/<webhook>/<index>`, as upstream's accessor UID. */
  uid: string;
  configurationName: string;
  name: string;
  /** The webhook as configured, with the v1 defaults applied. */
  spec: WebhookV1;
  rules: RuleWithOperationsV1[];
  failurePolicy: 'Fail' | 'Ignore';
  matchPolicy: 'Exact' | 'Equivalent';
  namespaceSelector: ParsedSelector;
  objectSelector: ParsedSelector;
  conditions: CompiledCondition[];
  timeoutSeconds: number;
  sideEffects: string | undefined;
  /** The first AdmissionReview version the webhook accepts that Plinth speaks; undefined: none. */
  reviewVersion: 'v1' | 'v1beta1' | undefined;
  reinvokeIfNeeded: boolean;
}

/** Parses a metav1.LabelSelector once; an unparsable one keeps its error for match time. Pure. */
export function parseSelector(sel: LabelSelectorV1 | null | undefined): ParsedSelector {
  try {
    const selector = labelSelectorFromMetav1(sel ?? {});
    return { selector, empty: selector.requirements.length === 0 };
  } catch (err) {
    return { error: err instanceof Error ? err.message : String(err) };
  }
}

function compileWebhook(kind: WebhookKind, configurationName: string, hook: WebhookV1, index: number): CompiledWebhook {
  const versions = hook.admissionReviewVersions ?? [];
  const reviewVersion = versions.find((v): v is 'v1' | 'v1beta1' => v === 'v1' || v === 'v1beta1');
  return {
    kind,
    uid: `${configurationName}/${hook.name}/${index}`,
    configurationName,
    name: hook.name,
    spec: hook,
    rules: hook.rules ?? [],
    failurePolicy: hook.failurePolicy === 'Ignore' ? 'Ignore' : 'Fail',
    matchPolicy: hook.matchPolicy === 'Exact' ? 'Exact' : 'Equivalent',
    namespaceSelector: parseSelector(hook.namespaceSelector),
    objectSelector: parseSelector(hook.objectSelector),
    conditions: compileMatchConditions(hook.matchConditions ?? []),
    timeoutSeconds: hook.timeoutSeconds ?? DEFAULT_TIMEOUT_SECONDS,
    sideEffects: hook.sideEffects ?? undefined,
    reviewVersion,
    reinvokeIfNeeded: kind === 'mutating' && hook.reinvocationPolicy === 'IfNeeded',
  };
}

/**
 * The webhooks of a set of configurations in call order: configurations
 * sorted by name (as upstream's sorters), webhooks in listed order.
 * Does not mutate `configs`.
 */
export function compileWebhooks(kind: WebhookKind, configs: readonly WebhookConfigurationV1[]): CompiledWebhook[] {
  const sorted = [...configs].sort((a, b) => {
    const x = a.metadata.name ?? '';
    const y = b.metadata.name ?? '';
    return x < y ? -1 : x > y ? 1 : 0;
  });
  const out: CompiledWebhook[] = [];
  for (const config of sorted) {
    const copy = structuredClone(config) as WebhookConfigurationV1;
    applyWebhookDefaults(copy as unknown as Record<string, unknown>, kind);
    (copy.webhooks ?? []).forEach((hook, i) => out.push(compileWebhook(kind, copy.metadata.name ?? '', hook, i)));
  }
  return out;
}
