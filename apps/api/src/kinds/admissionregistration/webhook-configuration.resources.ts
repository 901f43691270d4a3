import {
  mutatingWebhookConfigurationSchema,
  validatingWebhookConfigurationSchema,
} from '../../schema/admissionregistration-v1.schema.js';
import type { StructuralSchema } from '@plinth/apimachinery';
import { ageCell } from '../../table/human-duration.js';
import { ageColumn, nameColumn } from '../../table/standard-columns.js';
import type { KubeObject } from '@plinth/apimachinery';
import { STANDARD_VERBS, type ResourceDefinition, type ResourceStrategy, type TableColumn } from '../../registry/resource-definition.js';
import {
  mutatingWebhookConfigurationStrategy,
  validatingWebhookConfigurationStrategy,
} from './webhook-configuration.strategy.js';

const GROUP = 'admissionregistration.k8s.io';

// Upstream's printer columns for both kinds: NAME, WEBHOOKS, AGE.
const columns: TableColumn[] = [
  nameColumn,
  { name: 'Webhooks', type: 'integer', format: '', description: 'Webhooks indicates the number of webhooks registered in this configuration', priority: 0 },
  ageColumn,
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
    verbs: STANDARD_VERBS,
    subresources: [],
    schema,
    strategy,
    table: {
      columns,
      cells: (o: KubeObject, now: Date) => [o.metadata.name, Array.isArray(o.webhooks) ? o.webhooks.length : 0, ageCell(o.metadata.creationTimestamp, now)],
    },
    selectableFields: {},
    storageResource: `${GROUP}/${resource}`,
    cachedOnEveryReplica: true,
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
