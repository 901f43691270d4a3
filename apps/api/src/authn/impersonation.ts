import type { UserInfo } from '@plinth/apimachinery';
import type { AuthorizationAttributes, Authorizer } from '@plinth/apimachinery';
import { ApiError } from '@plinth/apimachinery';
import { ANONYMOUS_USER, AUTHENTICATED_GROUP, TENANT_EXTRA_KEY, UNAUTHENTICATED_GROUP } from '@plinth/apimachinery';
import { forbiddenMessage } from './forbidden-message.js';

/** The impersonation headers of one request, as sent. */
export interface ImpersonationRequest {
  user?: string;
  uid?: string;
  groups: string[];
  /** `Impersonate-Extra-<key>` values by (unescaped, lower-case) key. */
  extra: Record<string, string[]>;
}

const EXTRA_PREFIX = 'impersonate-extra-';

/**
 * Reads the `Impersonate-*` headers from the raw header list (name, value,
 * name, value…, so repeated headers stay separate values as Go sees them);
 * undefined when there are none. Throws 400 for malformed ones.
 */
export function impersonationHeaders(rawHeaders: string[]): ImpersonationRequest | undefined {
  const req: ImpersonationRequest = { groups: [], extra: {} };
  let any = false;
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    const h = rawHeaders[i].toLowerCase();
    if (!h.startsWith('impersonate-')) continue;
    const value = rawHeaders[i + 1];
    any = true;
    if (h === 'impersonate-user') req.user ??= value;
    else if (h === 'impersonate-uid') req.uid ??= value;
    else if (h === 'impersonate-group') req.groups.push(value);
    else if (h.startsWith(EXTRA_PREFIX)) {
      let key: string;
      try {
        key = decodeURIComponent(h.slice(EXTRA_PREFIX.length));
      } catch {
        throw ApiError.badRequest(`invalid impersonation extra key ${JSON.stringify(h)}`);
      }
      (req.extra[key] ??= []).push(value);
    }
  }
  if (!any) return undefined;
  if (!req.user) {
    const what = [...req.groups.map((g) => `group ${g}`), ...(req.uid ? [`uid ${req.uid}`] : []), ...Object.keys(req.extra).map((k) => `extra ${k}`)];
    throw ApiError.badRequest(`requested [${what.join(' ')}] without impersonating a user`);
  }
  return req;
}

/** The authorizer used when none is configured: only `system:masters` may impersonate. */
export const mastersOnlyAuthorizer: Authorizer = {
  authorize: (attrs) => ({ allowed: attrs.user.groups.includes('system:masters') }),
};

/**
 * Groups that mean something beyond one tenant: `system:masters` is allowed
 * everything in every tenant and exempt from fair queuing, rate limits and
 * the validation-share hold. Owners are cluster-admin inside their tenant,
 * which upstream's RBAC lets impersonate any group; these must be held to be
 * impersonated, whatever RBAC says.
 */
export const PLATFORM_GROUPS: ReadonlySet<string> = new Set(['system:masters']);

/** Extra keys the platform sets itself (the tenant a credential is bound to): impersonated only by platform administrators. */
export const PLATFORM_EXTRA_KEYS: ReadonlySet<string> = new Set([TENANT_EXTRA_KEY]);

function attrs(user: UserInfo, tenant: string, apiGroup: string, resource: string, name: string, namespace = '', subresource = ''): AuthorizationAttributes {
  return { user, tenant, verb: 'impersonate', resourceRequest: true, apiGroup, apiVersion: '', resource, subresource, namespace, name, path: '' };
}

/**
 * Upstream's impersonation filter: every requested user, group, uid and
 * extra value must be allowed by `authorizer` for verb `impersonate`
 * (users and groups in the core group; ServiceAccounts as
 * `serviceaccounts` in their namespace; uids and `userextras/<key>` in
 * authentication.k8s.io). Returns the impersonated user, or throws 403 on
 * the first denial. Does not mutate `requester`.
 */
export async function impersonate(requester: UserInfo, tenant: string, req: ImpersonationRequest, authorizer: Authorizer): Promise<UserInfo> {
  const username = req.user!;
  const checks: AuthorizationAttributes[] = [];
  const groups = [...req.groups];
  const sa = /^system:serviceaccount:([^:]+):([^:]+)$/.exec(username);
  if (sa) {
    checks.push(attrs(requester, tenant, '', 'serviceaccounts', sa[2], sa[1]));
    groups.push('system:serviceaccounts', `system:serviceaccounts:${sa[1]}`);
  } else {
    checks.push(attrs(requester, tenant, '', 'users', username));
  }
  for (const g of req.groups) checks.push(attrs(requester, tenant, '', 'groups', g));
  if (req.uid !== undefined) checks.push(attrs(requester, tenant, 'authentication.k8s.io', 'uids', req.uid));
  for (const [key, values] of Object.entries(req.extra)) {
    for (const v of values) checks.push(attrs(requester, tenant, 'authentication.k8s.io', 'userextras', v, '', key));
  }
  refusePlatformIdentities(requester, tenant, req);
  for (const a of checks) {
    const d = await authorizer.authorize(a);
    if (!d.allowed) throw refusal(a, d.reason);
  }
  if (!groups.includes(AUTHENTICATED_GROUP) && !groups.includes(UNAUTHENTICATED_GROUP)) {
    groups.push(username === ANONYMOUS_USER ? UNAUTHENTICATED_GROUP : AUTHENTICATED_GROUP);
  }
  const user: UserInfo = { username, groups: [...new Set(groups)] };
  if (req.uid !== undefined) user.uid = req.uid;
  if (Object.keys(req.extra).length > 0) user.extra = req.extra;
  return user;
}

/**
 * Throws upstream's 403 when `req` asks for a platform group the requester
 * does not hold, or a platform extra key without holding `system:masters`:
 * inside a tenant, RBAC's `impersonate` must not reach beyond the tenant.
 */
function refusePlatformIdentities(requester: UserInfo, tenant: string, req: ImpersonationRequest): void {
  const admin = requester.groups.some((g) => PLATFORM_GROUPS.has(g));
  for (const g of req.groups) {
    if (PLATFORM_GROUPS.has(g) && !requester.groups.includes(g)) {
      throw refusal(attrs(requester, tenant, '', 'groups', g), `group ${JSON.stringify(g)} belongs to the platform and may be impersonated only by its members`);
    }
  }
  for (const [key, values] of Object.entries(req.extra)) {
    if (!PLATFORM_EXTRA_KEYS.has(key) || admin) continue;
    throw refusal(attrs(requester, tenant, 'authentication.k8s.io', 'userextras', values[0] ?? '', '', key), `extra ${JSON.stringify(key)} is set by the platform and may be impersonated only by platform administrators`);
  }
}

function refusal(a: AuthorizationAttributes, reason: string | undefined): ApiError {
  return new ApiError(403, 'Forbidden', forbiddenMessage(a, reason), { name: a.name, group: a.apiGroup || undefined, kind: a.resource });
}
