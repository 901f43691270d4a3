import { configMapSchema, namespaceSchema, secretSchema } from '../schema/builtin-schemas.js';
import { ageCell } from '../table/human-duration.js';
import { ageColumn, nameColumn } from '../table/standard-columns.js';
import { authorizationResources } from '../authz/reviews/authorization-resources.js';
import { customResourceDefinitionResource } from '../crd/crd-resource.js';
import { admissionPolicyResources } from './admission-policy-resources.js';
import { rbacResources } from '../rbac/rbac-resources.js';
import { admissionRegistrationResources } from './admissionregistration-resources.js';
import { type KubeObject, isPlainObject } from '@plinth/apimachinery';
import { authenticationResources } from './authentication-resources.js';
import type { ResourceDefinition } from './resource-definition.js';
import { eventResource, eventsV1Resource } from './event-resource.js';
import { leaseResource } from './lease-resource.js';
import { featureGateResource } from '../features/feature-gate-resource.js';
import { resourceQuotaResource } from '../quota/resource-quota.resource.js';
import { configMapStrategy } from './strategies/configmap.strategy.js';
import { namespaceStrategy } from './strategies/namespace.strategy.js';
import { secretStrategy } from './strategies/secret.strategy.js';

const STANDARD_VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

function countKeys(...maps: unknown[]): number {
  return maps.reduce<number>((n, m) => n + (isPlainObject(m) ? Object.keys(m).length : 0), 0);
}

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

/** v1 Namespace, with its status and finalize subresources. */
export const namespaceResource: ResourceDefinition = {
  group: '',
  version: 'v1',
  resource: 'namespaces',
  singular: 'namespace',
  kind: 'Namespace',
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

/** The built-in kinds every tenant has. */
export const builtinResources: ResourceDefinition[] = [
  namespaceResource,
  configMapResource,
  secretResource,
  resourceQuotaResource,
  eventResource,
  eventsV1Resource,
  leaseResource,
  ...admissionRegistrationResources,
  ...admissionPolicyResources,
  customResourceDefinitionResource,
  ...authenticationResources,
  ...rbacResources,
  ...authorizationResources,
  featureGateResource,
];
