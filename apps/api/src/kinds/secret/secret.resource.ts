import type { KubeObject } from '@plinth/apimachinery';
import { type ResourceDefinition, STANDARD_VERBS } from '../../registry/resource-definition.js';
import { secretSchema } from '../../schema/builtin-schemas.js';
import { ageCell } from '../../table/human-duration.js';
import { ageColumn, countKeys, nameColumn } from '../../table/standard-columns.js';
import { secretStrategy } from './secret.strategy.js';

/** v1 Secret. */
export const secretResource: ResourceDefinition = {
  group: '',
  version: 'v1',
  resource: 'secrets',
  singular: 'secret',
  kind: 'Secret',
  listKind: 'SecretList',
  namespaced: true,
  shortNames: [],
  categories: [],
  verbs: STANDARD_VERBS,
  subresources: [],
  schema: secretSchema,
  strategy: secretStrategy,
  table: {
    columns: [
      nameColumn,
      { name: 'Type', type: 'string', format: '', description: 'Used to facilitate programmatic handling of secret data. More info: https://kubernetes.io/docs/concepts/configuration/secret/#secret-types', priority: 0 },
      { name: 'Data', type: 'string', format: '', description: 'Data contains the secret data. Each key must consist of alphanumeric characters, \'-\', \'_\' or \'.\'. The serialized form of the secret data is a base64 encoded string, representing the arbitrary (possibly non-string) data value here. Described in https://tools.ietf.org/html/rfc4648#section-4', priority: 0 },
      ageColumn,
    ],
    cells: (o: KubeObject, now: Date) => [o.metadata.name, o.type ?? '', countKeys(o.data), ageCell(o.metadata.creationTimestamp, now)],
  },
  selectableFields: { type: (o: KubeObject) => (typeof o.type === 'string' ? o.type : '') },
  storageResource: 'secrets',
  tracksGeneration: false,
  returnDeletedObject: false,
  nameValidation: 'subdomain',
};
