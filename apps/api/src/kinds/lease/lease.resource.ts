import { isPlainObject, type KubeObject } from '@plinth/apimachinery';
import { leaseSchema } from '../../schema/coordination-v1.schema.js';
import { ageCell } from '../../table/human-duration.js';
import { ageColumn, nameColumn } from '../../table/standard-columns.js';
import { STANDARD_VERBS, type ResourceDefinition } from '../../registry/resource-definition.js';
import { leaseStrategy } from './lease.strategy.js';

/**
 * coordination.k8s.io/v1 Lease: what leader election in client-go,
 * controller-runtime and the other clients locks on (and node heartbeats in
 * kube-node-lease).
 */
export const leaseResource: ResourceDefinition = {
  group: 'coordination.k8s.io',
  version: 'v1',
  resource: 'leases',
  singular: 'lease',
  kind: 'Lease',
  listKind: 'LeaseList',
  namespaced: true,
  shortNames: [],
  categories: [],
  verbs: STANDARD_VERBS,
  subresources: [],
  schema: leaseSchema,
  strategy: leaseStrategy,
  table: {
    columns: [nameColumn, { name: 'Holder', type: 'string', format: '', description: 'The holder of the lease', priority: 0 }, ageColumn],
    cells: (o: KubeObject, now: Date) => {
      const holder = isPlainObject(o.spec) && typeof o.spec.holderIdentity === 'string' ? o.spec.holderIdentity : '';
      return [o.metadata.name, holder, ageCell(o.metadata.creationTimestamp, now)];
    },
  },
  selectableFields: {},
  storageResource: 'coordination.k8s.io/leases',
  tracksGeneration: false,
  returnDeletedObject: false,
  nameValidation: 'subdomain',
};
