import { type FieldError, fieldErrors, isPlainObject, isQualifiedName, type KubeObject } from '@plinth/apimachinery';

const LEASE_STRATEGIES = ['OldestEmulationVersion'];

/** Upstream's ValidateCoordinatedLeaseStrategy: a known strategy, or a qualified `prefix/name` of a third-party one. */
function validateLeaseStrategy(strategy: unknown): FieldError[] {
  const s = String(strategy);
  const parts = s.split('/');
  if (parts.length === 1) return LEASE_STRATEGIES.includes(s) ? [] : [fieldErrors.notSupported('spec.strategy', strategy, LEASE_STRATEGIES)];
  if (parts.length === 2) return isQualifiedName(s).map((m) => fieldErrors.invalid('spec.strategy', strategy, m));
  return [fieldErrors.invalid('spec.strategy', strategy, 'must be a valid strategy name')];
}

/**
 * Upstream's ValidateLeaseSpec (coordination/validation) for v1 Leases:
 * leaseDurationSeconds above 0, leaseTransitions not negative. Metadata is
 * validated by the generic store. `strategy` and `preferredHolder` (dropped
 * before validation while CoordinatedLeaderElection is off) are validated
 * when present. Does not mutate `obj`.
 */
export function validateLeaseSpec(obj: KubeObject): FieldError[] {
  const spec = isPlainObject(obj.spec) ? obj.spec : {};
  const errs: FieldError[] = [];
  const duration = spec.leaseDurationSeconds;
  if (typeof duration === 'number' && duration <= 0) errs.push(fieldErrors.invalid('spec.leaseDurationSeconds', duration, 'must be greater than 0'));
  const transitions = spec.leaseTransitions;
  if (typeof transitions === 'number' && transitions < 0) {
    errs.push(fieldErrors.invalid('spec.leaseTransitions', transitions, 'must be greater than or equal to 0'));
  }
  if (spec.strategy !== undefined && spec.strategy !== null) errs.push(...validateLeaseStrategy(spec.strategy));
  if (typeof spec.preferredHolder === 'string' && spec.preferredHolder !== '' && !spec.strategy) {
    errs.push(fieldErrors.forbidden('spec.preferredHolder', 'may only be specified if `strategy` is defined'));
  }
  return errs;
}
