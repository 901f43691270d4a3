import { selfSubjectReviewSchema, serviceAccountSchema, tokenRequestSchema, tokenReviewSchema } from '../../schema/builtin-schemas.js';
import { ageCell } from '../../table/human-duration.js';
import { ageColumn, nameColumn } from '../../table/standard-columns.js';
import type { KubeObject } from '@plinth/apimachinery';
import { STANDARD_VERBS, type ResourceDefinition, type ResourceStrategy } from '../../registry/resource-definition.js';

/** ServiceAccount: nothing beyond metadata validation; `secrets` is kept as sent. */
const serviceAccountStrategy: ResourceStrategy = {
  prepareForCreate: () => undefined,
  prepareForUpdate: () => undefined,
  validate: () => [],
  validateUpdate: () => [],
  allowCreateOnUpdate: false,
  allowUnconditionalUpdate: true,
};

/** The strategy of create-only review kinds, which are answered and never stored. */
const reviewStrategy: ResourceStrategy = { ...serviceAccountStrategy };

/** v1 ServiceAccount, with the `token` subresource (TokenRequest, `kubectl create token`). */
export const serviceAccountResource: ResourceDefinition = {
  group: '',
  version: 'v1',
  resource: 'serviceaccounts',
  singular: 'serviceaccount',
  kind: 'ServiceAccount',
  listKind: 'ServiceAccountList',
  namespaced: true,
  shortNames: ['sa'],
  categories: [],
  verbs: STANDARD_VERBS,
  subresources: [{ name: 'token', kind: 'TokenRequest', group: 'authentication.k8s.io', version: 'v1', verbs: ['create'] }],
  schema: serviceAccountSchema,
  strategy: serviceAccountStrategy,
  table: {
    columns: [nameColumn, { name: 'Secrets', type: 'string', format: '', description: 'Secrets is a list of the secrets in the same namespace that pods running using this ServiceAccount are allowed to use.', priority: 0 }, ageColumn],
    cells: (o: KubeObject, now: Date) => [o.metadata.name, Array.isArray(o.secrets) ? o.secrets.length : 0, ageCell(o.metadata.creationTimestamp, now)],
  },
  selectableFields: {},
  storageResource: 'serviceaccounts',
  // Token authentication remembers ServiceAccounts in memory; the write barrier makes a deletion effective on this replica before it is answered.
  cachedOnEveryReplica: true,
  tracksGeneration: false,
  returnDeletedObject: true,
  nameValidation: 'subdomain',
};

function reviewResource(resource: string, kind: string, schema: ResourceDefinition['schema']): ResourceDefinition {
  return {
    group: 'authentication.k8s.io',
    version: 'v1',
    resource,
    singular: resource.replace(/s$/, ''),
    kind,
    listKind: `${kind}List`,
    namespaced: false,
    shortNames: [],
    categories: [],
    verbs: ['create'],
    subresources: [],
    schema,
    strategy: reviewStrategy,
    table: { columns: [nameColumn], cells: (o: KubeObject) => [o.metadata?.name ?? ''] },
    selectableFields: {},
    storageResource: `authentication.k8s.io/${resource}`,
    tracksGeneration: false,
    returnDeletedObject: false,
    nameValidation: 'subdomain',
  };
}

/** authentication.k8s.io/v1 TokenReview (create only, never stored). */
export const tokenReviewResource = reviewResource('tokenreviews', 'TokenReview', tokenReviewSchema);
/** authentication.k8s.io/v1 SelfSubjectReview (`kubectl auth whoami`; create only, never stored). */
export const selfSubjectReviewResource = reviewResource('selfsubjectreviews', 'SelfSubjectReview', selfSubjectReviewSchema);

/** authentication.k8s.io/v1 TokenRequest, the body of `serviceaccounts/{name}/token` (decoding only; not a served resource). */
export const tokenRequestKind = reviewResource('tokenrequests', 'TokenRequest', tokenRequestSchema);

/** The kinds authentication serves. */
export const authenticationResources: ResourceDefinition[] = [serviceAccountResource, tokenReviewResource, selfSubjectReviewResource];
