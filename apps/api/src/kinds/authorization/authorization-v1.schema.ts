import { objectMetaProperty, typeMetaProperties } from '../../schema/object-meta.schema.js';
import type { StructuralSchema } from '@plinth/apimachinery';

const s = (description: string): StructuralSchema => ({ type: 'string', description });
const strings = (description: string): StructuralSchema => ({ type: 'array', description, items: { type: 'string', default: '' }, 'x-kubernetes-list-type': 'atomic' });

const requirement: StructuralSchema = {
  type: 'object',
  properties: { key: s('key is the label key that the selector applies to.'), operator: s('operator represents a key\'s relationship to a set of values.'), values: strings('values is an array of string values.') },
};

/** authorization/v1 ResourceAttributes. */
export const resourceAttributesSchema: StructuralSchema = {
  type: 'object',
  description: 'ResourceAttributes includes the authorization attributes available for resource requests to the Authorizer interface',
  properties: {
    fieldSelector: {
      type: 'object',
      description: 'fieldSelector describes the limitation on access based on field.  It can only limit access, not broaden it.',
      properties: { rawSelector: s('rawSelector is the serialization of a field selector that would be included in a query parameter.'), requirements: { type: 'array', items: requirement, 'x-kubernetes-list-type': 'atomic' } },
    },
    group: s('Group is the API Group of the Resource.  "*" means all.'),
    labelSelector: {
      type: 'object',
      description: 'labelSelector describes the limitation on access based on labels.  It can only limit access, not broaden it.',
      properties: { rawSelector: s('rawSelector is the serialization of a field selector that would be included in a query parameter.'), requirements: { type: 'array', items: requirement, 'x-kubernetes-list-type': 'atomic' } },
    },
    name: s('Name is the name of the resource being requested for a "get" or deleted for a "delete". "" (empty) means all.'),
    namespace: s(
      'Namespace is the namespace of the action being requested.  Currently, there is no distinction between no namespace and all namespaces "" (empty) is defaulted for LocalSubjectAccessReviews "" (empty) is empty for cluster-scoped resources "" (empty) means "all" for namespace scoped resources from a SubjectAccessReview or SelfSubjectAccessReview',
    ),
    resource: s('Resource is one of the existing resource types.  "*" means all.'),
    subresource: s('Subresource is one of the existing resource types.  "" means none.'),
    verb: s('Verb is a kubernetes resource API verb, like: get, list, watch, create, update, delete, proxy.  "*" means all.'),
    version: s('Version is the API Version of the Resource.  "*" means all.'),
  },
};

/** authorization/v1 NonResourceAttributes. */
export const nonResourceAttributesSchema: StructuralSchema = {
  type: 'object',
  description: 'NonResourceAttributes includes the authorization attributes available for non-resource requests to the Authorizer interface',
  properties: { path: s('Path is the URL path of the request'), verb: s('Verb is the standard HTTP verb') },
};

/** authorization/v1 SubjectAccessReviewStatus. */
export const accessReviewStatusSchema: StructuralSchema = {
  type: 'object',
  description: 'SubjectAccessReviewStatus',
  required: ['allowed'],
  properties: {
    allowed: { type: 'boolean', default: false, description: 'Allowed is required. True if the action would be allowed, false otherwise.' },
    denied: { type: 'boolean', description: 'Denied is optional. True if the action would be denied, otherwise false.' },
    evaluationError: s('EvaluationError is an indication that some error occurred during the authorization check.'),
    reason: s('Reason is optional.  It indicates why a request was allowed or denied.'),
  },
};

function review(description: string, spec: StructuralSchema, status: StructuralSchema): StructuralSchema {
  return { type: 'object', description, required: ['spec'], properties: { ...typeMetaProperties(), metadata: objectMetaProperty(), spec, status } };
}

const attributes = {
  nonResourceAttributes: { ...nonResourceAttributesSchema, description: 'NonResourceAttributes describes information for a non-resource access request' },
  resourceAttributes: { ...resourceAttributesSchema, description: 'ResourceAuthorizationAttributes describes information for a resource access request' },
};

const subjectSpec: StructuralSchema = {
  type: 'object',
  description: 'SubjectAccessReviewSpec is a description of the access request.  Exactly one of ResourceAuthorizationAttributes and NonResourceAuthorizationAttributes must be set',
  properties: {
    ...attributes,
    extra: { type: 'object', description: 'Extra corresponds to the user.Info.GetExtra() method from the authenticator.', additionalProperties: strings('') },
    groups: strings("Groups is the groups you're testing for."),
    uid: s('UID information about the requesting user.'),
    user: s('User is the user you\'re testing for. If you specify "User" but not "Groups", then is it interpreted as "What if User were not a member of any groups'),
  },
};

/** authorization/v1 SubjectAccessReview. */
export const subjectAccessReviewSchema = review('SubjectAccessReview checks whether or not a user or group can perform an action.', subjectSpec, accessReviewStatusSchema);
/** authorization/v1 LocalSubjectAccessReview. */
export const localSubjectAccessReviewSchema = review(
  'LocalSubjectAccessReview checks whether or not a user or group can perform an action in a given namespace. Having a namespace scoped resource makes it much easier to grant namespace scoped policy that includes permissions checking.',
  subjectSpec,
  accessReviewStatusSchema,
);
/** authorization/v1 SelfSubjectAccessReview. */
export const selfSubjectAccessReviewSchema = review(
  'SelfSubjectAccessReview checks whether or the current user can perform an action.  Not filling in a spec.namespace means "in all namespaces".  Self is a special case, because users should always be able to check whether they can perform an action',
  { type: 'object', description: 'SelfSubjectAccessReviewSpec is a description of the access request.  Exactly one of ResourceAuthorizationAttributes and NonResourceAuthorizationAttributes must be set', properties: attributes },
  accessReviewStatusSchema,
);

const resourceRule: StructuralSchema = {
  type: 'object',
  required: ['verbs'],
  properties: { apiGroups: strings('APIGroups'), resourceNames: strings('ResourceNames'), resources: strings('Resources'), verbs: strings('Verbs') },
};
const nonResourceRule: StructuralSchema = { type: 'object', required: ['verbs'], properties: { nonResourceURLs: strings('NonResourceURLs'), verbs: strings('Verbs') } };

/** authorization/v1 SelfSubjectRulesReview. */
export const selfSubjectRulesReviewSchema = review(
  'SelfSubjectRulesReview enumerates the set of actions the current user can perform within a namespace.',
  { type: 'object', description: 'SelfSubjectRulesReviewSpec defines the specification for SelfSubjectRulesReview.', properties: { namespace: s('Namespace to evaluate rules for. Required.') } },
  {
    type: 'object',
    required: ['resourceRules', 'nonResourceRules', 'incomplete'],
    properties: {
      evaluationError: s('EvaluationError can appear in combination with Rules.'),
      incomplete: { type: 'boolean', default: false, description: 'Incomplete is true when the rules returned by this call are incomplete.' },
      nonResourceRules: { type: 'array', items: nonResourceRule, 'x-kubernetes-list-type': 'atomic' },
      resourceRules: { type: 'array', items: resourceRule, 'x-kubernetes-list-type': 'atomic' },
    },
  },
);
