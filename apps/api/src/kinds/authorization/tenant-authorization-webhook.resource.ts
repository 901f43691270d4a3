import { isPlainObject, type KubeObject, type StructuralSchema } from '@plinth/apimachinery';
import { STANDARD_VERBS, type ResourceDefinition } from '../../registry/resource-definition.js';
import { objectMetaProperty, typeMetaProperties } from '../../schema/object-meta.schema.js';
import { ageCell } from '../../table/human-duration.js';
import { ageColumn, nameColumn } from '../../table/standard-columns.js';
import { tenantAuthorizationWebhookStrategy } from './tenant-authorization-webhook.strategy.js';

/**
 * Plinth's API group of a tenant's own authorization objects, served in every
 * tenant (tenancy.plinth.dev is served in the platform scope only: a tenant
 * sees nothing of it).
 */
export const AUTHORIZATION_PLINTH_GROUP = 'authorization.plinth.dev';
/** Its version (not gated, as features.plinth.dev/v1alpha1). */
export const AUTHORIZATION_PLINTH_VERSION = 'v1alpha1';
/** The storage resource of TenantAuthorizationWebhooks. */
export const TENANT_AUTHORIZATION_WEBHOOK_STORAGE_RESOURCE = `${AUTHORIZATION_PLINTH_GROUP}/tenantauthorizationwebhooks`;

const duration = (description: string): StructuralSchema => ({ type: 'string', description });

const specSchema: StructuralSchema = {
  type: 'object',
  description: 'TenantAuthorizationWebhookSpec is a webhook authorizer of the tenant, with the fields of a Webhook authorizer of upstream\'s AuthorizationConfiguration; clientConfig replaces connectionInfo.',
  required: ['clientConfig'],
  properties: {
    clientConfig: {
      type: 'object',
      description: 'ClientConfig says where the SubjectAccessReviews are POSTed.',
      required: ['url'],
      properties: {
        url: { type: 'string', description: 'URL of the webhook, https://host[:port][/path]; checked against the platform\'s webhook egress policy when written and at every call.' },
        caBundle: { type: 'string', format: 'byte', description: 'CABundle is a PEM encoded CA bundle to verify the webhook\'s serving certificate; the system roots when unset.' },
      },
    },
    timeout: duration('Timeout of one call, at most 30s (default 10s).'),
    authorizedTTL: duration('How long an allowed answer is cached (default 5m).'),
    unauthorizedTTL: duration('How long a not-allowed answer is cached (default 30s).'),
    cacheAuthorizedRequests: { type: 'boolean', description: 'Whether allowed answers are cached (default true; as 1.34\'s AuthorizationConfiguration).' },
    cacheUnauthorizedRequests: { type: 'boolean', description: 'Whether not-allowed answers are cached (default true).' },
    subjectAccessReviewVersion: { type: 'string', description: 'The authorization.k8s.io version of the reviews sent: v1 (default) or v1beta1.', enum: ['v1', 'v1beta1'] },
    matchConditionSubjectAccessReviewVersion: { type: 'string', description: 'The version of the review matchConditions see: v1.', enum: ['v1'] },
    failurePolicy: { type: 'string', description: 'What a call that fails or times out decides: NoOpinion (default) or Deny.', enum: ['NoOpinion', 'Deny'] },
    matchConditions: {
      type: 'array',
      description: 'CEL expressions over `request` (the SubjectAccessReview spec); the webhook is asked only when all are true.',
      items: { type: 'object', required: ['expression'], properties: { expression: { type: 'string', description: 'A CEL expression that yields a bool.' } } },
    },
  },
};

function spec(o: KubeObject, key: string): unknown {
  return isPlainObject(o.spec) ? o.spec[key] : undefined;
}

/**
 * authorization.plinth.dev/v1alpha1 TenantAuthorizationWebhook: cluster-scoped, in
 * every tenant; each is a webhook authorizer asked about requests into its
 * own tenant that the platform's authorizers left undecided
 * (docs/authorization.md). Every replica caches them.
 */
export const tenantAuthorizationWebhookResource: ResourceDefinition = {
  group: AUTHORIZATION_PLINTH_GROUP,
  version: AUTHORIZATION_PLINTH_VERSION,
  resource: 'tenantauthorizationwebhooks',
  singular: 'tenantauthorizationwebhook',
  kind: 'TenantAuthorizationWebhook',
  listKind: 'TenantAuthorizationWebhookList',
  namespaced: false,
  shortNames: [],
  categories: [],
  verbs: STANDARD_VERBS,
  subresources: [],
  schema: {
    type: 'object',
    description: 'TenantAuthorizationWebhook is a webhook authorizer of the tenant: asked with a SubjectAccessReview about requests into the tenant that the platform\'s authorizers did not decide.',
    properties: { ...typeMetaProperties(), metadata: objectMetaProperty(), spec: specSchema },
  },
  strategy: tenantAuthorizationWebhookStrategy,
  table: {
    columns: [
      nameColumn,
      { name: 'URL', type: 'string', format: '', description: 'URL of the webhook.', priority: 0 },
      { name: 'Failure Policy', type: 'string', format: '', description: 'What a failed call decides.', priority: 0 },
      ageColumn,
    ],
    cells: (o: KubeObject, now: Date) => [
      o.metadata.name,
      isPlainObject(spec(o, 'clientConfig')) ? String((spec(o, 'clientConfig') as Record<string, unknown>).url ?? '') : '',
      String(spec(o, 'failurePolicy') ?? ''),
      ageCell(o.metadata.creationTimestamp, now),
    ],
  },
  selectableFields: {},
  storageResource: TENANT_AUTHORIZATION_WEBHOOK_STORAGE_RESOURCE,
  cachedOnEveryReplica: true,
  tracksGeneration: true,
  returnDeletedObject: false,
  nameValidation: 'subdomain',
};
