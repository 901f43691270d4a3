import type { StructuralSchema } from '@plinth/apimachinery';
import { objectMetaProperty, typeMetaProperties } from '../../schema/object-meta.schema.js';

/** The group and version LeaseCandidate is served at (beta since 1.33, as upstream 1.35 serves it). */
export const LEASE_CANDIDATE_GROUP = 'coordination.k8s.io';
/** See {@link LEASE_CANDIDATE_GROUP}. */
export const LEASE_CANDIDATE_VERSION = 'v1beta1';
/** Where LeaseCandidate objects are stored. */
export const LEASE_CANDIDATE_STORAGE_RESOURCE = 'coordination.k8s.io/leasecandidates';

const microTime = (description: string): StructuralSchema => ({ type: 'string', format: 'date-time', description });

/** coordination.k8s.io/v1beta1 LeaseCandidate. */
export const leaseCandidateSchema: StructuralSchema = {
  type: 'object',
  description: 'LeaseCandidate defines a candidate for a Lease object. Candidates are created such that coordinated leader election will pick the best leader from the list of candidates.',
  properties: {
    ...typeMetaProperties(),
    metadata: objectMetaProperty('More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata'),
    spec: {
      type: 'object',
      description: 'spec contains the specification of the Lease. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#spec-and-status',
      required: ['leaseName', 'binaryVersion', 'strategy'],
      properties: {
        binaryVersion: { type: 'string', default: '', description: 'BinaryVersion is the binary version. It must be in a semver format without leading `v`. This field is required.' },
        emulationVersion: {
          type: 'string',
          description: 'EmulationVersion is the emulation version. It must be in a semver format without leading `v`. EmulationVersion must be less than or equal to BinaryVersion. This field is required when strategy is "OldestEmulationVersion"',
        },
        leaseName: {
          type: 'string',
          default: '',
          description: 'LeaseName is the name of the lease for which this candidate is contending. The limits on this field are the same as on Lease.name. Multiple lease candidates may reference the same Lease.name. This field is immutable.',
        },
        pingTime: microTime('PingTime is the last time that the server has requested the LeaseCandidate to renew. It is only done during leader election to check if any LeaseCandidates have become ineligible. When PingTime is updated, the LeaseCandidate will respond by updating RenewTime.'),
        renewTime: microTime('RenewTime is the time that the LeaseCandidate was last updated. Any time a Lease needs to do leader election, the PingTime field is updated to signal to the LeaseCandidate that they should update the RenewTime. Old LeaseCandidate objects are also garbage collected if it has been hours since the last renew. The PingTime field is updated regularly to prevent garbage collection for still active LeaseCandidates.'),
        strategy: {
          type: 'string',
          default: '',
          description: 'Strategy is the strategy that coordinated leader election will use for picking the leader. If multiple candidates for the same Lease return different strategies, the strategy provided by the candidate with the latest BinaryVersion will be used. If there is still conflict, this is a user error and coordinated leader election will not operate the Lease until resolved.',
        },
      },
    },
  },
};
