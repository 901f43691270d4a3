import { dropDisabledFields, type GatedField } from '../../features/gated-fields.js';
import { validateLeaseSpec } from './lease.validation.js';
import type { ResourceStrategy } from '../../registry/resource-definition.js';

/** The fields of the CoordinatedLeaderElection feature (beta since 1.33, off by default). */
const GATED_FIELDS: readonly GatedField[] = [
  { path: 'spec.strategy', gate: 'CoordinatedLeaderElection' },
  { path: 'spec.preferredHolder', gate: 'CoordinatedLeaderElection' },
];

/**
 * coordination.k8s.io/v1 Lease (registry/coordination/lease): no status,
 * no generation; a PUT may create; an update must carry resourceVersion.
 * `strategy` and `preferredHolder` are dropped while CoordinatedLeaderElection
 * is off, unless the stored Lease already uses them (upstream's dropDisabledFields).
 */
export const leaseStrategy: ResourceStrategy = {
  prepareForCreate: (obj, ctx) => dropDisabledFields(obj, undefined, GATED_FIELDS, ctx),
  prepareForUpdate: (obj, old, ctx) => dropDisabledFields(obj, old, GATED_FIELDS, ctx),
  validate: (obj) => validateLeaseSpec(obj),
  validateUpdate: (obj) => validateLeaseSpec(obj),
  allowCreateOnUpdate: true,
  allowUnconditionalUpdate: false,
};
