import {
  mutatingWebhookConfigurationSchema,
  validatingWebhookConfigurationSchema,
} from '../schema/admissionregistration-v1.schema.js';
import type { StructuralSchema } from '../schema/structural-schema.js';
import { ageCell } from '../table/human-duration.js';
import type { KubeObject } from './kube-object.js';
import type { ResourceDefinition, ResourceStrategy, TableColumn } from './resource-definition.js';
import {
  mutatingWebhookConfigurationStrategy,
  validatingWebhookConfigurationStrategy,
} from './strategies/webhook-configuration.strategy.js';

const GROUP = 'admissionregistration.k8s.io';

// Upstream's printer columns for both kinds: NAME, WEBHOOKS, AGE.
const columns: TableColumn[] = [
  {
    name: 'Name',
    type: 'string',
    format: 'name',
    description:
      'Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names',
    priority: 0,
  },
  { name: 'Webhooks', type: 'integer', format: '', description: 'Webhooks indicates the number of webhooks registered in this configuration', priority: 0 },
  {
    name: 'Age',
    type: 'string',
    format: '',
    description:
      'CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata',
    priority: 0,
  },
];

function definition(kind: string, resource: string, schema: StructuralSchema, strategy: ResourceStrategy): ResourceDefinition {
  return {
    group: GROUP,
    version: 'v1',
    resource,
    singular: kind.toLowerCase(),
    kind,
    listKind: `${kind}List`,
    namespaced: false,
    shortNames: [],
    categories: ['api-extensions'],
    verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
    subresources: [],
    schema,
    strategy,
    table: {
      columns,
      cells: (o: KubeObject, now: Date) => [o.metadata.name, Array.isArray(o.webhooks) ? o.webhooks.length : 0, ageCell(o.metadata.creationTimestamp, now)],
    },
    selectableFields: {},
    storageResource: `${GROUP}/${resource}`,
    tracksGeneration: true,
    returnDeletedObject: false,
    nameValidation: 'subdomain',
  };
}

/** admissionregistration.k8s.io/v1 MutatingWebhookConfiguration (cluster-scoped, per tenant). */
export const mutatingWebhookConfigurationResource: ResourceDefinition = definition(
  'MutatingWebhookConfiguration',
  'mutatingwebhookconfigurations',
  mutatingWebhookConfigurationSchema,
  mutatingWebhookConfigurationStrategy,
);

/** admissionregistration.k8s.io/v1 ValidatingWebhookConfiguration (cluster-scoped, per tenant). */
export const validatingWebhookConfigurationResource: ResourceDefinition = definition(
  'ValidatingWebhookConfiguration',
  'validatingwebhookconfigurations',
  validatingWebhookConfigurationSchema,
  validatingWebhookConfigurationStrategy,
);

/** Both webhook configuration kinds, in the order they are served. */
export const admissionRegistrationResources: ResourceDefinition[] = [mutatingWebhookConfigurationResource, validatingWebhookConfigurationResource];
