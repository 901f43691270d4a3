import type { AdmissionAttributes, GroupVersionKind } from '../admission-attributes.js';
import type { WebhookCallDependencies } from './webhook-invoker.js';
import type { WebhookMatchDependencies } from './webhook-matcher.js';
import type { WebhookSource } from './webhook-source.js';

/** Everything the two webhook modules need; apps/api provides it. */
export interface WebhookModuleDependencies extends WebhookCallDependencies, WebhookMatchDependencies {
  source: WebhookSource;
  /**
   * Re-validates an object a mutating webhook patched, as decoding it into
   * the kind would (JSON types checked, undeclared fields pruned). Returns
   * the object to continue with; throws to fail the request with 500
   * InternalError (an AdmissionError is passed on as is).
   */
  normalizePatched?(attrs: AdmissionAttributes, patched: Record<string, unknown>): Record<string, unknown>;
}

function apiVersionOf(gvk: GroupVersionKind): string {
  return gvk.group ? `${gvk.group}/${gvk.version}` : gvk.version;
}

/**
 * The object as the webhook expects it: unchanged when the webhook is
 * called with the request's own version, otherwise a shallow copy with the
 * equivalent version's apiVersion (Plinth's equivalent versions share one
 * schema, as CRD versions with conversion strategy None).
 */
export function toVersion<T extends Record<string, unknown> | null>(obj: T, from: GroupVersionKind, to: GroupVersionKind): T {
  if (obj === null || (from.group === to.group && from.version === to.version)) return obj;
  return { ...obj, apiVersion: apiVersionOf(to) } as T;
}
