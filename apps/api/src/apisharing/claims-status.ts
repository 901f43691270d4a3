import type { KubeObject } from '@plinth/apimachinery';
import { bindingClaims, claimResource, claimsOutcome, type PermissionClaim } from '../kinds/apis/permission-claims.js';

/** A status condition as APIBinding carries them. */
export interface BindingCondition {
  type: string;
  status: 'True' | 'False';
  reason: string;
  message: string;
  lastTransitionTime: string;
}

/** What an APIBinding's status says of its export's claims (kcp's fields and conditions). */
export interface ClaimsStatus {
  exportPermissionClaims: PermissionClaim[];
  appliedPermissionClaims: PermissionClaim[];
  conditions: BindingCondition[];
}

function names(claims: { group: string; resource: string }[]): string {
  return claims.map(claimResource).join(', ');
}

/**
 * The claims part of an APIBinding's status, given the claims its export
 * makes (`undefined`: the export is missing): `exportPermissionClaims`,
 * `appliedPermissionClaims` (those accepted exactly as made: what the
 * provider's view grants), and two conditions, as kcp's:
 * `PermissionClaimsValid` (False, reason `InvalidClaims`, when the binding
 * answers claims the export does not make, or no longer makes as answered)
 * and `PermissionClaimsApplied` (True when every claim is answered; the
 * message names the accepted and rejected ones; False, reason
 * `ClaimsNotAnswered`, names the open ones). A condition keeps its
 * lastTransitionTime from `previous` when its status did not change. Pure.
 */
export function claimsStatus(claims: PermissionClaim[] | undefined, binding: KubeObject, previous: BindingCondition[], now: string): ClaimsStatus {
  const outcome = claimsOutcome(claims ?? [], bindingClaims(binding));
  const since = (type: string, status: string) => previous.find((c) => c.type === type && c.status === status)?.lastTransitionTime ?? now;
  const valid: BindingCondition =
    outcome.stale.length === 0
      ? { type: 'PermissionClaimsValid', status: 'True', reason: 'ClaimsValid', message: '', lastTransitionTime: '' }
      : { type: 'PermissionClaimsValid', status: 'False', reason: 'InvalidClaims', message: `the export makes no such claim (or makes it differently): ${names(outcome.stale)}`, lastTransitionTime: '' };
  const answered = [outcome.applied.length ? `accepted: ${names(outcome.applied)}` : '', outcome.rejected.length ? `rejected: ${names(outcome.rejected)}` : ''].filter(Boolean).join('; ');
  const applied: BindingCondition =
    outcome.open.length === 0
      ? { type: 'PermissionClaimsApplied', status: 'True', reason: outcome.requested.length ? 'ClaimsAnswered' : 'NoClaims', message: answered, lastTransitionTime: '' }
      : { type: 'PermissionClaimsApplied', status: 'False', reason: 'ClaimsNotAnswered', message: [`not answered: ${names(outcome.open)}`, answered].filter(Boolean).join('; '), lastTransitionTime: '' };
  for (const c of [valid, applied]) c.lastTransitionTime = since(c.type, c.status);
  return { exportPermissionClaims: outcome.requested, appliedPermissionClaims: outcome.applied, conditions: [valid, applied] };
}
