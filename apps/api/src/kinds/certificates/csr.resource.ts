import type { KubeObject } from '@plinth/apimachinery';
import { STANDARD_VERBS, type ResourceDefinition } from '../../registry/resource-definition.js';
import { ageCell, humanDuration } from '../../table/human-duration.js';
import { ageColumn, nameColumn } from '../../table/standard-columns.js';
import { CERTIFICATES_GROUP, csrConditions, csrSpec, issuedCertificate } from './csr-api.js';
import { csrSchema } from './csr.schema.js';
import { csrApprovalStrategy, csrStatusStrategy, csrStrategy } from './csr.strategy.js';

const column = (name: string, description: string) => ({ name, type: 'string', format: '', description, priority: 0 });

/** Upstream's CONDITION column: Denied, else Approved, else Pending; then ,Failed and ,Issued. Pure. */
export function csrConditionCell(o: KubeObject): string {
  const types = new Set(csrConditions(o).map((c) => c.type));
  let status = types.has('Denied') ? 'Denied' : types.has('Approved') ? 'Approved' : 'Pending';
  if (types.has('Failed')) status += ',Failed';
  if (issuedCertificate(o)) status += ',Issued';
  return status;
}

/**
 * certificates.k8s.io/v1 CertificateSigningRequest, cluster-scoped in each
 * tenant, with its `approval` (kubectl certificate approve|deny) and
 * `status` (signers) subresources; `spec.signerName` is selectable.
 */
export const csrResource: ResourceDefinition = {
  group: CERTIFICATES_GROUP,
  version: 'v1',
  resource: 'certificatesigningrequests',
  singular: 'certificatesigningrequest',
  kind: 'CertificateSigningRequest',
  listKind: 'CertificateSigningRequestList',
  namespaced: false,
  shortNames: ['csr'],
  categories: [],
  verbs: STANDARD_VERBS,
  subresources: [
    { name: 'approval', kind: 'CertificateSigningRequest', group: CERTIFICATES_GROUP, version: 'v1', verbs: ['get', 'patch', 'update'] },
    { name: 'status', kind: 'CertificateSigningRequest', group: CERTIFICATES_GROUP, version: 'v1', verbs: ['get', 'patch', 'update'] },
  ],
  schema: csrSchema,
  strategy: csrStrategy,
  subresourceStrategies: { approval: csrApprovalStrategy, status: csrStatusStrategy },
  table: {
    columns: [
      nameColumn,
      ageColumn,
      column('SignerName', 'Name of the signer'),
      column('Requestor', 'Name of the requester'),
      column('RequestedDuration', 'Requested duration of the certificate'),
      column('Condition', 'State of the request (Pending, Approved, Denied, then Failed and Issued)'),
    ],
    cells: (o: KubeObject, now: Date) => {
      const spec = csrSpec(o);
      const exp = spec.expirationSeconds;
      return [
        o.metadata.name,
        ageCell(o.metadata.creationTimestamp, now),
        spec.signerName || '<none>',
        spec.username ?? '',
        typeof exp === 'number' ? humanDuration(exp * 1000) : '<none>',
        csrConditionCell(o),
      ];
    },
  },
  selectableFields: { 'spec.signerName': (o: KubeObject) => csrSpec(o).signerName ?? '' },
  storageResource: `${CERTIFICATES_GROUP}/certificatesigningrequests`,
  tracksGeneration: false,
  returnDeletedObject: false,
  nameValidation: 'path-segment',
};
