import type { KubeObject } from '@plinth/apimachinery';
import { type ResourceDefinition, STANDARD_VERBS } from '../../registry/resource-definition.js';
import { configMapSchema } from '../../schema/builtin-schemas.js';
import { ageCell } from '../../table/human-duration.js';
import { ageColumn, countKeys, nameColumn } from '../../table/standard-columns.js';
import { configMapStrategy } from './configmap.strategy.js';

/** v1 ConfigMap. */
export const configMapResource: ResourceDefinition = {
  group: '',
  version: 'v1',
  resource: 'configmaps',
  singular: 'configmap',
  kind: 'ConfigMap',
  listKind: 'ConfigMapList',
  namespaced: true,
  shortNames: ['cm'],
  // Upstream's 'all' holds workloads (pods, services, deployments…), which Plinth does not serve; without
  // any member `kubectl get all` fails outright, so ConfigMaps (never Secrets) stand in.
  categories: ['all'],
  verbs: STANDARD_VERBS,
  subresources: [],
  schema: configMapSchema,
  strategy: configMapStrategy,
  table: {
    columns: [nameColumn, { name: 'Data', type: 'string', format: '', description: 'Data contains the configuration data. Each key must consist of alphanumeric characters, \'-\', \'_\' or \'.\'. Values with non-UTF-8 byte sequences must use the BinaryData field. The keys stored in Data must not overlap with the keys in the BinaryData field, this is enforced during validation process.', priority: 0 }, ageColumn],
    cells: (o: KubeObject, now: Date) => [o.metadata.name, countKeys(o.data, o.binaryData), ageCell(o.metadata.creationTimestamp, now)],
  },
  selectableFields: {},
  storageResource: 'configmaps',
  tracksGeneration: false,
  returnDeletedObject: false,
  nameValidation: 'subdomain',
};
