import { isPlainObject, type KubeObject } from '@plinth/apimachinery';
import { STANDARD_VERBS, type ResourceDefinition, type ResourceStrategy } from '../../registry/resource-definition.js';
import { ageCell } from '../../table/human-duration.js';
import { ageColumn, nameColumn } from '../../table/standard-columns.js';
import { LEASE_CANDIDATE_GROUP, LEASE_CANDIDATE_STORAGE_RESOURCE, LEASE_CANDIDATE_VERSION, leaseCandidateSchema } from './lease-candidate.schema.js';
import { validateLeaseCandidate, validateLeaseCandidateUpdate } from './lease-candidate.validation.js';

function specField(o: KubeObject, key: string): string {
  return isPlainObject(o.spec) && typeof o.spec[key] === 'string' ? (o.spec[key] as string) : '';
}

/** registry/coordination/leasecandidate: no status, nothing reset; a PUT may create; an update must carry resourceVersion. */
export const leaseCandidateStrategy: ResourceStrategy = {
  prepareForCreate: () => undefined,
  prepareForUpdate: () => undefined,
  validate: (obj) => validateLeaseCandidate(obj),
  validateUpdate: (obj, old) => validateLeaseCandidateUpdate(obj, old),
  allowCreateOnUpdate: true,
  allowUnconditionalUpdate: false,
};

/**
 * coordination.k8s.io/v1beta1 LeaseCandidate (KEP-4355, beta since 1.33):
 * namespaced, with upstream's columns NAME, LEASENAME, BINARYVERSION,
 * EMULATIONVERSION, AGE and the field selector spec.leaseName. Served when
 * PLINTH_RUNTIME_CONFIG enables coordination.k8s.io/v1beta1 (off by
 * default, as upstream); the election runs with the
 * CoordinatedLeaderElection gate (coordinated-leader-election.controller.ts).
 */
export const leaseCandidateResource: ResourceDefinition = {
  group: LEASE_CANDIDATE_GROUP,
  version: LEASE_CANDIDATE_VERSION,
  resource: 'leasecandidates',
  singular: 'leasecandidate',
  kind: 'LeaseCandidate',
  listKind: 'LeaseCandidateList',
  namespaced: true,
  shortNames: [],
  categories: [],
  verbs: STANDARD_VERBS,
  subresources: [],
  schema: leaseCandidateSchema,
  strategy: leaseCandidateStrategy,
  table: {
    columns: [
      nameColumn,
      { name: 'LeaseName', type: 'string', format: '', description: 'LeaseName is the name of the lease for which this candidate is contending. The limits on this field are the same as on Lease.name. Multiple lease candidates may reference the same Lease.name. This field is immutable.', priority: 0 },
      { name: 'BinaryVersion', type: 'string', format: '', description: '', priority: 0 },
      { name: 'EmulationVersion', type: 'string', format: '', description: '', priority: 0 },
      ageColumn,
    ],
    cells: (o, now) => [o.metadata.name, specField(o, 'leaseName'), specField(o, 'binaryVersion'), specField(o, 'emulationVersion'), ageCell(o.metadata.creationTimestamp, now)],
  },
  selectableFields: { 'spec.leaseName': (o) => specField(o, 'leaseName') },
  storageResource: LEASE_CANDIDATE_STORAGE_RESOURCE,
  tracksGeneration: false,
  returnDeletedObject: false,
  nameValidation: 'path-segment',
};
