import type { AdmissionAttributes, UserInfo } from '@plinth/admission';
import { CelAuthorizer, type CelAuthzAnswer, type CelAuthzBackend, CelResourceCheck, type CelAuthzQuestion } from '@plinth/cel';
import type { AuthorizationDecision, Authorizer, SelectorRequirementAttributes } from '@plinth/apimachinery';
import { fieldSelectorAttributes, labelSelectorAttributes, TENANT_EXTRA_KEY } from '@plinth/apimachinery';

/** The selectors of a `fieldSelector()`/`labelSelector()` check as the authorizer takes them (unparsable ones left out, as upstream). */
function selectors(field: string | undefined, label: string | undefined): { fieldSelector?: SelectorRequirementAttributes[]; labelSelector?: SelectorRequirementAttributes[] } {
  const fieldSelector = fieldSelectorAttributes(field);
  const labelSelector = labelSelectorAttributes(label);
  return { ...(fieldSelector ? { fieldSelector } : {}), ...(labelSelector ? { labelSelector } : {}) };
}

function answerOf(d: AuthorizationDecision): CelAuthzAnswer {
  return d.error ? { allowed: d.allowed, reason: d.reason ?? '', error: d.error } : { allowed: d.allowed, reason: d.reason ?? '' };
}

/** Decisions an evaluation's `authorizer` asked for but could not have synchronously (a webhook call, an RBAC index loading). */
const pendingOf = new WeakMap<CelAuthorizer, Promise<void>[]>();

/**
 * Waits for the decisions the `authorizer` value of an evaluation could not
 * give synchronously (its checks then reported `errored()`), which it keeps
 * for the rest of the request. True when there were any: evaluating again
 * reads them. Never rejects.
 */
export async function settlePolicyAuthorizer(authorizer: unknown): Promise<boolean> {
  const pending = authorizer instanceof CelAuthorizer ? pendingOf.get(authorizer) : undefined;
  if (!pending || pending.length === 0) return false;
  const waiting = pending.splice(0);
  await Promise.all(waiting);
  return true;
}

/**
 * The CEL `authorizer` of an admission policy evaluation: the request's
 * user (and, through `serviceAccount(ns, name)`, a ServiceAccount of the
 * same tenant) asked of the request path's authorizer chain, synchronously
 * (CEL is): the RBAC index is loaded (the request itself was authorized
 * with it) and webhooks answer from their caches. A decision that needs a
 * call starts it and the check errs; {@link settlePolicyAuthorizer} awaits
 * it, and the answer is kept for the request's next evaluation.
 * `fieldSelector()`/`labelSelector()` (KEP-4601) are passed on.
 * `requestResource` is the request's own resource.
 */
export function policyAuthorizer(authorizer: Authorizer, attrs: AdmissionAttributes): CelAuthorizer {
  const known = new Map<string, CelAuthzAnswer>();
  const pending: Promise<void>[] = [];
  const ask = (user: UserInfo, q: CelAuthzQuestion): CelAuthzAnswer => {
    const key = JSON.stringify([user.username, q]);
    const answered = known.get(key);
    if (answered) return answered;
    const d = authorizer.authorize({
      user,
      tenant: attrs.tenant,
      verb: q.verb,
      resourceRequest: q.resourceRequest,
      apiGroup: q.group,
      apiVersion: '',
      resource: q.resource,
      subresource: q.subresource,
      namespace: q.namespace,
      name: q.name,
      path: q.path,
      ...selectors(q.fieldSelector, q.labelSelector),
    });
    if (!(d instanceof Promise)) return answerOf(d);
    pending.push(
      d.then(
        (r) => void known.set(key, answerOf(r)),
        (err: unknown) => void known.set(key, { allowed: false, reason: '', error: err instanceof Error ? err.message : String(err) }),
      ),
    );
    throw new Error('the decision is not available yet (an authorization webhook is being asked)');
  };
  const backend = (user: UserInfo): CelAuthzBackend => ({
    check: (q) => ask(user, q),
    asServiceAccount: (namespace, name) =>
      backend({
        username: `system:serviceaccount:${namespace}:${name}`,
        groups: ['system:serviceaccounts', `system:serviceaccounts:${namespace}`, 'system:authenticated'],
        extra: { [TENANT_EXTRA_KEY]: [attrs.tenant] },
      }),
  });
  const own = backend(attrs.user);
  const r = attrs.resource;
  const value = new CelAuthorizer(own, new CelResourceCheck(own, r.group, r.resource, attrs.subresource, attrs.namespace, attrs.name));
  pendingOf.set(value, pending);
  return value;
}
