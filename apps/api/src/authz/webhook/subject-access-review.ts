import type { AuthorizationAttributes } from '@plinth/apimachinery';

/**
 * The `extra` key through which webhooks learn which tenant (logical
 * cluster) a request addresses: a SubjectAccessReview has no field for it,
 * and a multi-tenant webhook cannot decide without it (kcp passes its
 * cluster name the same way).
 */
export const REQUEST_TENANT_EXTRA_KEY = 'authorization.plinth.dev/tenant';

/**
 * The `spec` of the authorization.k8s.io/v1 SubjectAccessReview a webhook
 * receives for `attrs`, as upstream's webhook authorizer builds it (empty
 * fields left out; selectors, KEP-4601, on resource requests that have
 * them), with the addressed tenant in `extra` under
 * REQUEST_TENANT_EXTRA_KEY. `redactExtra` removes what the webhook must not
 * see of the user's own `extra`. Pure.
 */
export function subjectAccessReviewSpec(attrs: AuthorizationAttributes, redactExtra?: (extra: Record<string, string[]>, tenant: string) => Record<string, string[]>): Record<string, unknown> {
  const { user } = attrs;
  const own = user.extra ?? {};
  const extra: Record<string, string[]> = { ...(redactExtra ? redactExtra(own, attrs.tenant) : own), [REQUEST_TENANT_EXTRA_KEY]: [attrs.tenant] };
  const spec: Record<string, unknown> = {};
  if (attrs.resourceRequest) {
    const ra: Record<string, unknown> = {};
    const put = (k: string, v: string) => {
      if (v) ra[k] = v;
    };
    put('namespace', attrs.namespace);
    put('verb', attrs.verb);
    put('group', attrs.apiGroup);
    put('version', attrs.apiVersion);
    put('resource', attrs.resource);
    put('subresource', attrs.subresource);
    put('name', attrs.name);
    if (attrs.fieldSelector?.length) ra.fieldSelector = { requirements: attrs.fieldSelector };
    if (attrs.labelSelector?.length) ra.labelSelector = { requirements: attrs.labelSelector };
    spec.resourceAttributes = ra;
  } else {
    spec.nonResourceAttributes = { path: attrs.path, verb: attrs.verb };
  }
  if (user.username) spec.user = user.username;
  if (user.groups.length > 0) spec.groups = user.groups;
  spec.extra = Object.fromEntries(Object.keys(extra).sort().map((k) => [k, extra[k]]));
  if (user.uid) spec.uid = user.uid;
  return spec;
}

/**
 * The review to POST: v1 as is; v1beta1 with its field names (`group` for
 * the groups) and without what it lacks (selectors). Pure.
 */
export function subjectAccessReviewBody(spec: Record<string, unknown>, version: 'v1' | 'v1beta1'): Record<string, unknown> {
  if (version === 'v1') return { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', metadata: { creationTimestamp: null }, spec, status: { allowed: false } };
  const { groups, resourceAttributes, ...rest } = spec as { groups?: string[]; resourceAttributes?: Record<string, unknown> } & Record<string, unknown>;
  const beta: Record<string, unknown> = { ...rest };
  if (groups) beta.group = groups;
  if (resourceAttributes) {
    const { fieldSelector: _f, labelSelector: _l, ...ra } = resourceAttributes;
    beta.resourceAttributes = ra;
  }
  return { apiVersion: 'authorization.k8s.io/v1beta1', kind: 'SubjectAccessReview', metadata: { creationTimestamp: null }, spec: beta, status: { allowed: false } };
}
