import type { StructuralSchema } from '@plinth/apimachinery';
import { objectMetaProperty, typeMetaProperties } from './object-meta.schema.js';

/** metav1.MicroTime: RFC 3339 with microseconds. */
const microTime = (description: string): StructuralSchema => ({ type: 'string', format: 'date-time', description });

/** coordination.k8s.io/v1 LeaseSpec. */
export const leaseSpecSchema: StructuralSchema = {
  type: 'object',
  description: 'LeaseSpec is a specification of a Lease.',
  properties: {
    acquireTime: microTime('acquireTime is a time when the current lease was acquired.'),
    holderIdentity: { type: 'string', description: 'holderIdentity contains the identity of the holder of a current lease. If Coordinated Leader Election is used, the holder identity must be equal to the elected LeaseCandidate.metadata.name field.' },
    leaseDurationSeconds: {
      type: 'integer',
      format: 'int32',
      description: 'leaseDurationSeconds is a duration that candidates for a lease need to wait to force acquire it. This is measured against the time of last observed renewTime.',
    },
    leaseTransitions: { type: 'integer', format: 'int32', description: 'leaseTransitions is the number of transitions of a lease between holders.' },
    preferredHolder: {
      type: 'string',
      description: 'PreferredHolder signals to a lease holder that the lease has a more optimal holder and should be given up. This field can only be set if Strategy is also set.',
    },
    renewTime: microTime('renewTime is a time when the current holder of a lease has last updated the lease.'),
    strategy: {
      type: 'string',
      description: 'Strategy indicates the strategy for picking the leader for coordinated leader election. If the field is not specified, there is no active coordination for this lease. (Alpha) Using this field requires the CoordinatedLeaderElection feature gate to be enabled.',
    },
  },
};

/** coordination.k8s.io/v1 Lease. */
export const leaseSchema: StructuralSchema = {
  type: 'object',
  description: 'Lease defines a lease concept.',
  properties: {
    ...typeMetaProperties(),
    metadata: objectMetaProperty(),
    spec: { ...leaseSpecSchema, description: 'spec contains the specification of the Lease. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#spec-and-status' },
  },
};
