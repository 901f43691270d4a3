import type { AdmissionAttributes, UserInfo } from '@plinth/admission';
import { CelAuthorizer, type CelAuthzBackend, CelResourceCheck } from '@plinth/cel';
import type { Authorizer } from '@plinth/apimachinery';
import { TENANT_EXTRA_KEY } from '@plinth/apimachinery';

/**
 * The CEL `authorizer` of an admission policy evaluation: the request's
 * user (and, through `serviceAccount(ns, name)`, a ServiceAccount of the
 * same tenant) asked of the request path's authorizer, synchronously — the
 * tenant's RBAC index is loaded, since the request itself was authorized
 * with it. `requestResource` is the request's own resource.
 */
export function policyAuthorizer(authorizer: Authorizer, attrs: AdmissionAttributes): CelAuthorizer {
  const backend = (user: UserInfo): CelAuthzBackend => ({
    check: (q) => {
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
      });
      if (d instanceof Promise) {
        d.catch(() => undefined);
        throw new Error('authorization of this tenant is not loaded yet');
      }
      return { allowed: d.allowed, reason: d.reason ?? '' };
    },
    asServiceAccount: (namespace, name) =>
      backend({
        username: `system:serviceaccount:${namespace}:${name}`,
        groups: ['system:serviceaccounts', `system:serviceaccounts:${namespace}`, 'system:authenticated'],
        extra: { [TENANT_EXTRA_KEY]: [attrs.tenant] },
      }),
  });
  const own = backend(attrs.user);
  const r = attrs.resource;
  return new CelAuthorizer(own, new CelResourceCheck(own, r.group, r.resource, attrs.subresource, attrs.namespace, attrs.name));
}
