import type { UserInfo } from '@plinth/admission';
import { ApiError } from '@plinth/apimachinery';
import type { AuthorizationAttributes, AuthorizationDecision, Authorizer } from '@plinth/apimachinery';
import { ruleAllows } from '../kinds/rbac/policy-rule.js';
import type { TenantRbacIndex } from './rbac-index.js';
import { TENANT_EXTRA_KEY } from '@plinth/apimachinery';

/** Non-resource paths upstream's system:public-info-viewer opens to everyone; they reveal nothing about a tenant. */
const PUBLIC_INFO = /^\/(healthz|livez|readyz|version)(\/.*)?$/;

/**
 * Whether `user` belongs to `tenant`: its identity was
 * issued for it (a ServiceAccount token of the tenant, an issuer identity
 * mapped to it), or a binding in the tenant names the user or one of their
 * own groups. Pure.
 */
export function isTenantMember(index: TenantRbacIndex, user: UserInfo, tenant: string): boolean {
  return (user.extra?.[TENANT_EXTRA_KEY] ?? []).includes(tenant) || index.hasMember(user);
}

/**
 * The multi-tenant rule on top of RBAC (kcp's workspace "access" check in
 * spirit): in a tenant, only its members are authorized at all, except for
 * the public-info paths. Bindings to `system:authenticated` (the default
 * `system:discovery`, `system:basic-user`) therefore grant the tenant's own
 * members, never every identity of the platform: an outsider cannot list a
 * tenant's API groups, OpenAPI or kinds. Then upstream's RBAC decision.
 */
export function tenantDecision(index: TenantRbacIndex, attrs: AuthorizationAttributes): AuthorizationDecision {
  return index.decisionOf(decisionKey(attrs), () => uncachedTenantDecision(index, attrs));
}

/**
 * Every attribute a tenant decision reads, as one string: the user's name,
 * groups and tenant claims (membership and subjects), then the request's
 * verb, group, resource, subresource, namespace, name and, for
 * non-resource requests, path. Requests with equal keys get equal
 * decisions over the same index.
 */
function decisionKey(attrs: AuthorizationAttributes): string {
  const { user } = attrs;
  const tenants = user.extra?.[TENANT_EXTRA_KEY] ?? [];
  const request = attrs.resourceRequest
    ? `r\u0001${attrs.verb}\u0001${attrs.apiGroup}\u0001${attrs.resource}\u0001${attrs.subresource}\u0001${attrs.namespace}\u0001${attrs.name}`
    : `n\u0001${attrs.verb}\u0001${attrs.path}`;
  return `${user.username}\u0002${user.groups.join('\u0001')}\u0002${tenants.join('\u0001')}\u0002${request}`;
}

function uncachedTenantDecision(index: TenantRbacIndex, attrs: AuthorizationAttributes): AuthorizationDecision {
  if (isSelfReview(attrs)) return { allowed: true, reason: 'RBAC: every authenticated user may review themselves' };
  if (!(!attrs.resourceRequest && PUBLIC_INFO.test(attrs.path)) && !isTenantMember(index, attrs.user, attrs.tenant)) return { allowed: false, noOpinion: true };
  return rbacDecision(index, attrs);
}

/** Self reviews (whoami, can-i, can-i --list), upstream's system:basic-user: about the caller only, so they are open to every authenticated user in every tenant alike (what a tenant contains never changes the answer's shape). */
const SELF_REVIEWS = new Set(['authentication.k8s.io/selfsubjectreviews', 'authorization.k8s.io/selfsubjectaccessreviews', 'authorization.k8s.io/selfsubjectrulesreviews']);

function isSelfReview(attrs: AuthorizationAttributes): boolean {
  return attrs.resourceRequest && attrs.verb === 'create' && attrs.subresource === '' && SELF_REVIEWS.has(`${attrs.apiGroup}/${attrs.resource}`) && attrs.user.groups.includes('system:authenticated');
}

/** The group upstream's privileged-group authorizer allows everything; Plinth's platform administrators are in it. */
export const SYSTEM_MASTERS = 'system:masters';

/**
 * Upstream's RBAC decision over one tenant's index: allowed with reason
 * `RBAC: allowed by <binding>` when a rule of a binding that applies grants
 * the request; otherwise not allowed (no opinion), with the role resolution
 * errors as reason (`RBAC: [clusterrole… not found]`) when there were any. Pure.
 */
export function rbacDecision(index: TenantRbacIndex, attrs: AuthorizationAttributes): AuthorizationDecision {
  let reason = '';
  const errors: string[] = [];
  index.visitRulesFor(attrs.user, attrs.namespace, (describe, rule, err) => {
    if (rule && ruleAllows(attrs, rule)) {
      reason = `RBAC: allowed by ${describe()}`;
      return false;
    }
    if (err) errors.push(err);
    return true;
  }, true);
  if (reason) return { allowed: true, reason };
  if (errors.length === 0) return { allowed: false, noOpinion: true };
  // utilerrors.NewAggregate: one error as is, several as [a, b].
  const agg = errors.length === 1 ? errors[0] : `[${errors.join(', ')}]`;
  return { allowed: false, noOpinion: true, reason: `RBAC: ${agg}` };
}

/** Where the authorizer finds a tenant's index: synchronously when loaded, else by loading it. */
export interface RbacIndexSource {
  /** The loaded index of `tenant`, or undefined when it must be loaded first. */
  peek(tenant: string): TenantRbacIndex | undefined;
  /** The index of `tenant` (empty for a tenant that does not exist). */
  get(tenant: string): Promise<TenantRbacIndex>;
}

/**
 * The request path's authorizer, as kube-apiserver's union of the
 * privileged-group authorizer (`system:masters`: platform administrators,
 * allowed everything in every tenant, with an empty reason) and RBAC inside
 * the addressed tenant, for the tenant's members only ({@link tenantDecision}). Never throws for unknown tenants or users: denies.
 * Rejects with a 503 ApiError when the tenant's policy cannot be read.
 * Answers synchronously when the tenant's index is loaded.
 */
export class RbacAuthorizer implements Authorizer {
  private readonly privileged: Set<string>;

  constructor(
    private readonly indexes: RbacIndexSource,
    privilegedGroups: string[] = [SYSTEM_MASTERS],
  ) {
    this.privileged = new Set(privilegedGroups);
  }

  authorize(attrs: AuthorizationAttributes): AuthorizationDecision | Promise<AuthorizationDecision> {
    if (attrs.user.groups.some((g) => this.privileged.has(g))) return { allowed: true };
    const loaded = this.indexes.peek(attrs.tenant);
    if (loaded) return tenantDecision(loaded, attrs);
    return this.indexes.get(attrs.tenant).then(
      (index) => tenantDecision(index, attrs),
      () => {
        throw ApiError.serviceUnavailable('authorization is unavailable: the RBAC policy of this cluster could not be read, try again later');
      },
    );
  }

  /** Whether `groups` include a privileged group (upstream's EscalationAllowed). */
  isPrivileged(groups: string[]): boolean {
    return groups.some((g) => this.privileged.has(g));
  }
}
