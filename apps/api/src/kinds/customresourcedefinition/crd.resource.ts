import type { KubeObject } from '@plinth/apimachinery';
import { STANDARD_VERBS, type ResourceDefinition } from '../../registry/resource-definition.js';
import { customResourceDefinitionSchema } from '../../schema/apiextensions-v1.schema.js';
import { objectMetaSchema } from '../../schema/object-meta.schema.js';
import { APIEXTENSIONS_GROUP } from './crd-types.js';
import { crdStatusStrategy, crdStrategy } from './crd.strategy.js';

/** The storage key resource of CRDs. */
export const CRD_STORAGE_RESOURCE = `customresourcedefinitions.${APIEXTENSIONS_GROUP}`;

/** apiextensions.k8s.io/v1 CustomResourceDefinition: cluster-scoped, with `/status`. */
export const customResourceDefinitionResource: ResourceDefinition = {
  group: APIEXTENSIONS_GROUP,
  version: 'v1',
  resource: 'customresourcedefinitions',
  singular: 'customresourcedefinition',
  kind: 'CustomResourceDefinition',
  emptyObject: () => ({
    metadata: { creationTimestamp: null },
    spec: { group: '', names: { plural: '', kind: '' }, scope: '', versions: null },
    status: { acceptedNames: { plural: '', kind: '' }, storedVersions: null },
  }),
  listKind: 'CustomResourceDefinitionList',
  namespaced: false,
  shortNames: ['crd', 'crds'],
  categories: ['api-extensions'],
  verbs: STANDARD_VERBS,
  subresources: [{ name: 'status', kind: 'CustomResourceDefinition', group: APIEXTENSIONS_GROUP, version: 'v1', verbs: ['get', 'patch', 'update'] }],
  schema: customResourceDefinitionSchema,
  strategy: crdStrategy,
  subresourceStrategies: { status: crdStatusStrategy },
  table: {
    columns: [
      { name: 'Name', type: 'string', format: 'name', description: objectMetaSchema.properties?.name?.description ?? '', priority: 0 },
      { name: 'Created At', type: 'date', format: '', description: objectMetaSchema.properties?.creationTimestamp?.description ?? '', priority: 0 },
    ],
    cells: (o: KubeObject) => [o.metadata.name, o.metadata.creationTimestamp ?? ''],
  },
  selectableFields: {},
  storageResource: CRD_STORAGE_RESOURCE,
  cachedOnEveryReplica: true,
  tracksGeneration: true,
  returnDeletedObject: true,
  nameValidation: 'subdomain',
};
