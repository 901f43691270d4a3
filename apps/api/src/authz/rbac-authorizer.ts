import { ApiError } from '@plinth/apimachinery';
import type { AuthorizationAttributes, AuthorizationDecision, Authorizer } from './authorizer.js';
import { ruleAllows } from './policy-rule.js';
import type { TenantRbacIndex } from './rbac-index.js';

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
 * the addressed tenant. Never throws for unknown tenants or users: denies.
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
    if (loaded) return rbacDecision(loaded, attrs);
    return this.indexes.get(attrs.tenant).then(
      (index) => rbacDecision(index, attrs),
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
