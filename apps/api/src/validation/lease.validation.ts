import { type FieldError, fieldErrors, isPlainObject, type KubeObject } from '@plinth/apimachinery';

/**
 * Upstream's ValidateLeaseSpec (coordination/validation) for v1 Leases:
 * leaseDurationSeconds above 0, leaseTransitions not negative. Metadata is
 * validated by the generic store; strategy and preferredHolder are dropped
 * before validation while CoordinatedLeaderElection is off (as in 1.32).
 * Does not mutate `obj`.
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
  return errs;
}
