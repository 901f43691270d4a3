import { isPlainObject, type KubeObject } from '@plinth/apimachinery';
import { validateLeaseSpec } from '../../validation/lease.validation.js';
import type { ResourceStrategy } from '../resource-definition.js';

/** Fields of the CoordinatedLeaderElection feature (alpha, off in 1.32). */
const GATED_FIELDS = ['strategy', 'preferredHolder'] as const;

/** Drops the gated fields unless the stored object already uses them (upstream's dropDisabledFields). Mutates `obj`. */
function dropDisabledFields(obj: KubeObject, old?: KubeObject): void {
  if (!isPlainObject(obj.spec)) return;
  const oldSpec = old && isPlainObject(old.spec) ? old.spec : {};
  for (const f of GATED_FIELDS) if (oldSpec[f] === undefined || oldSpec[f] === '') delete obj.spec[f];
}

/**
 * coordination.k8s.io/v1 Lease (registry/coordination/lease): no status,
 * no generation; a PUT may create; an update must carry resourceVersion.
 */
export const leaseStrategy: ResourceStrategy = {
  prepareForCreate: (obj) => dropDisabledFields(obj),
  prepareForUpdate: (obj, old) => dropDisabledFields(obj, old),
  validate: (obj) => validateLeaseSpec(obj),
  validateUpdate: (obj) => validateLeaseSpec(obj),
  allowCreateOnUpdate: true,
  allowUnconditionalUpdate: false,
};
