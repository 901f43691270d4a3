import type { KubeObject } from '@plinth/apimachinery';
import type { ResourceDefinition, ResourceStrategy } from '../../registry/resource-definition.js';
import type { StructuralSchema } from '@plinth/apimachinery';
import { nameColumn } from '../../table/standard-columns.js';
import {
  localSubjectAccessReviewSchema,
  selfSubjectAccessReviewSchema,
  selfSubjectRulesReviewSchema,
  subjectAccessReviewSchema,
} from './authorization-v1.schema.js';

/** The API group of the access reviews. */
export const AUTHORIZATION_GROUP = 'authorization.k8s.io';

/** Reviews are answered, never stored: their strategy is never called by a store. */
const reviewStrategy: ResourceStrategy = {
  prepareForCreate: () => undefined,
  prepareForUpdate: () => undefined,
  validate: () => [],
  validateUpdate: () => [],
  allowCreateOnUpdate: false,
  allowUnconditionalUpdate: false,
};

function review(kind: string, resource: string, namespaced: boolean, schema: StructuralSchema): ResourceDefinition {
  return {
    group: AUTHORIZATION_GROUP,
    version: 'v1',
    resource,
    singular: kind.toLowerCase(),
    kind,
    listKind: `${kind}List`,
    namespaced,
    shortNames: [],
    categories: [],
    verbs: ['create'],
    subresources: [],
    schema,
    strategy: reviewStrategy,
    table: { columns: [nameColumn], cells: (o: KubeObject) => [o.metadata?.name ?? ''] },
    selectableFields: {},
    storageResource: `${AUTHORIZATION_GROUP}/${resource}`,
    tracksGeneration: false,
    returnDeletedObject: false,
    nameValidation: 'subdomain',
  };
}

/** authorization.k8s.io/v1 SubjectAccessReview (create only). */
export const subjectAccessReviewResource = review('SubjectAccessReview', 'subjectaccessreviews', false, subjectAccessReviewSchema);
/** authorization.k8s.io/v1 LocalSubjectAccessReview (namespaced, create only). */
export const localSubjectAccessReviewResource = review('LocalSubjectAccessReview', 'localsubjectaccessreviews', true, localSubjectAccessReviewSchema);
/** authorization.k8s.io/v1 SelfSubjectAccessReview (`kubectl auth can-i`; create only). */
export const selfSubjectAccessReviewResource = review('SelfSubjectAccessReview', 'selfsubjectaccessreviews', false, selfSubjectAccessReviewSchema);
/** authorization.k8s.io/v1 SelfSubjectRulesReview (`kubectl auth can-i --list`; create only). */
export const selfSubjectRulesReviewResource = review('SelfSubjectRulesReview', 'selfsubjectrulesreviews', false, selfSubjectRulesReviewSchema);

/** The four access review kinds, in upstream's discovery order. */
export const authorizationResources: ResourceDefinition[] = [
  localSubjectAccessReviewResource,
  selfSubjectAccessReviewResource,
  selfSubjectRulesReviewResource,
  subjectAccessReviewResource,
];
