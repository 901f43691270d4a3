import type { AdmissionAttributes } from '../admission-attributes.js';
import { AdmissionError } from '../admission-error.js';
import { celRequest, type WebhookMatchDependencies } from '../webhook/webhook-matcher.js';
import type { CompiledPolicyBase } from './compiled-policy.js';
import type { PolicyCel } from './policy-cel.js';
import type { PolicyMetricsSink } from './policy-metrics.js';
import type { ParamStore } from './policy-params.js';
import type { PolicyMatchTarget } from './policy-match.js';
import type { PolicySource } from './policy-source.js';

/** Everything the policy modules need; apps/api provides it. */
export interface PolicyModuleDependencies extends WebhookMatchDependencies {
  source: PolicySource;
  cel: PolicyCel;
  params: ParamStore;
  /** A namespace object as stored, or undefined when it does not exist. */
  namespaceObject(tenant: string, name: string): Promise<Record<string, unknown> | undefined>;
  metrics?: PolicyMetricsSink;
  /**
   * Runs a tenant's synchronous CEL evaluation under its share of
   * validation time (may throw a 429 error when the share is spent);
   * unset: unmetered.
   */
  meter?<T>(tenant: string, evaluate: () => T): T;
  /** The CEL `authorizer` value for the request's user, when the server has an authorizer. */
  authorizer?(attrs: AdmissionAttributes): unknown;
  /**
   * Waits for the decisions an `authorizer` value could not give
   * synchronously during an evaluation (authorization webhooks being
   * asked); true when there were any, so that evaluating again reads them.
   */
  settleAuthorizer?(authorizer: unknown): Promise<boolean>;
  /**
   * Re-validates an object a mutating policy changed, as decoding it into
   * the kind would. Returns the object to continue with; throws to fail the
   * request (an AdmissionError is passed on as is).
   */
  normalizePatched?(attrs: AdmissionAttributes, patched: Record<string, unknown>): Record<string, unknown>;
}

/** upstream's CreateNamespaceObject: the namespace's metadata (without managed fields and owners), spec and status. */
export function namespaceForCel(ns: Record<string, unknown> | undefined): Record<string, unknown> | null {
  if (!ns) return null;
  const meta = (ns.metadata ?? {}) as Record<string, unknown>;
  const keep = ['name', 'generateName', 'namespace', 'uid', 'resourceVersion', 'generation', 'creationTimestamp', 'deletionTimestamp', 'deletionGracePeriodSeconds', 'labels', 'annotations', 'finalizers'];
  const metadata: Record<string, unknown> = {};
  for (const k of keep) if (meta[k] !== undefined) metadata[k] = meta[k];
  return { metadata, spec: ns.spec ?? {}, status: ns.status ?? {} };
}

/** The namespace whose object is `namespaceObject`: none for cluster-scoped requests and for namespaces themselves. */
export function namespaceNameFor(attrs: AdmissionAttributes): string {
  if (attrs.kind.group === '' && attrs.kind.version === 'v1' && attrs.kind.kind === 'Namespace') return '';
  return attrs.namespace;
}

/** The request variable for a policy matched as `target`. */
export function policyRequest(attrs: AdmissionAttributes, target: PolicyMatchTarget): Record<string, unknown> {
  return celRequest(attrs, { resource: target.resource, kind: target.kind, subresource: attrs.subresource });
}

/**
 * upstream's admission.NewForbidden message wrapper with a policy's reason
 * and code: `<resource>.<group> "<name>" is forbidden: <message>`, the
 * message repeated as the one cause.
 */
export function policyDenial(attrs: AdmissionAttributes, message: string, reason: string): AdmissionError {
  const qualified = attrs.resource.group ? `${attrs.resource.resource}.${attrs.resource.group}` : attrs.resource.resource;
  const name = attrs.name || ((attrs.object?.metadata as { name?: string } | undefined)?.name ?? '');
  const codes: Record<string, number> = { Forbidden: 403, Unauthorized: 401, RequestEntityTooLarge: 413, Invalid: 422 };
  return new AdmissionError({
    code: codes[reason] ?? 422,
    reason,
    message: name ? `${qualified} "${name}" is forbidden: ${message}` : `${qualified} is forbidden: ${message}`,
    details: { name: name || undefined, group: attrs.resource.group || undefined, kind: attrs.resource.resource, causes: [{ message }] },
  });
}

/** A configuration problem of a policy or binding as a decision message (`failed to configure …`). */
export function configurationMessage(err: unknown, binding: boolean): string {
  const text = err instanceof AdmissionError ? err.status.message : err instanceof Error ? err.message : String(err);
  return `failed to configure ${binding ? 'binding' : 'policy'}: ${text}`;
}

/** Whether a failure of `policy` blocks the request. */
export function failsClosed(policy: CompiledPolicyBase): boolean {
  return policy.failurePolicy !== 'Ignore';
}
