import { isPlainObject, type KubeObject } from '@plinth/apimachinery';
import type { ResourceDefinition } from '../../registry/resource-definition.js';
import { namespaceSchema } from '../../schema/builtin-schemas.js';
import { ageCell } from '../../table/human-duration.js';
import { ageColumn, nameColumn } from '../../table/standard-columns.js';
import { namespaceFinalizeStrategy, namespaceStatusStrategy, namespaceStrategy } from './namespace.strategy.js';

/** v1 Namespace, with its status and finalize subresources. */
export const namespaceResource: ResourceDefinition = {
  group: '',
  version: 'v1',
  resource: 'namespaces',
  singular: 'namespace',
  kind: 'Namespace',
  emptyObject: () => ({ metadata: { creationTimestamp: null }, spec: {}, status: {} }),
  listKind: 'NamespaceList',
  namespaced: false,
  shortNames: ['ns'],
  categories: [],
  verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'],
  subresources: [
    { name: 'finalize', kind: 'Namespace', group: '', version: 'v1', verbs: ['update'] },
    { name: 'status', kind: 'Namespace', group: '', version: 'v1', verbs: ['get', 'patch', 'update'] },
  ],
  schema: namespaceSchema,
  strategy: namespaceStrategy,
  subresourceStrategies: { status: namespaceStatusStrategy, finalize: namespaceFinalizeStrategy },
  table: {
    columns: [
      nameColumn,
      { name: 'Status', type: 'string', format: '', description: 'The status of the namespace', priority: 0 },
      ageColumn,
    ],
    cells: (o: KubeObject, now: Date) => [
      o.metadata.name,
      isPlainObject(o.status) && typeof o.status.phase === 'string' ? o.status.phase : '',
      ageCell(o.metadata.creationTimestamp, now),
    ],
  },
  selectableFields: { 'status.phase': (o: KubeObject) => (isPlainObject(o.status) && typeof o.status.phase === 'string' ? o.status.phase : '') },
  storageResource: 'namespaces',
  tracksGeneration: false,
  returnDeletedObject: true,
  nameValidation: 'label',
};
