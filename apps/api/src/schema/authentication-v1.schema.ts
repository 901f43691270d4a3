import { objectMetaProperty, timeSchema, typeMetaProperties } from './object-meta.schema.js';
import type { StructuralSchema } from '@plinth/apimachinery';

const str = (description: string): StructuralSchema => ({ type: 'string', description });
const strings = (description: string): StructuralSchema => ({ type: 'array', description, items: { type: 'string', default: '' } });

const objectReference: StructuralSchema = {
  type: 'object',
  description: 'ObjectReference contains enough information to let you inspect or modify the referred object.',
  'x-kubernetes-map-type': 'atomic',
  properties: {
    apiVersion: str('API version of the referent.'),
    fieldPath: str('If referring to a piece of an object instead of an entire object, this string should contain a valid JSON/Go field access statement.'),
    kind: str('Kind of the referent.'),
    name: str('Name of the referent.'),
    namespace: str('Namespace of the referent.'),
    resourceVersion: str('Specific resourceVersion to which this reference is made, if any.'),
    uid: str('UID of the referent.'),
  },
};

/** v1 ServiceAccount. */
export const serviceAccountSchema: StructuralSchema = {
  type: 'object',
  description: 'ServiceAccount binds together: * a name, understood by users, and perhaps by peripheral systems, for an identity * a principal that can be authenticated and authorized * a set of secrets',
  properties: {
    ...typeMetaProperties(),
    automountServiceAccountToken: { type: 'boolean', description: 'AutomountServiceAccountToken indicates whether pods running as this service account should have an API token automatically mounted.' },
    imagePullSecrets: {
      type: 'array',
      description: 'ImagePullSecrets is a list of references to secrets in the same namespace to use for pulling any images in pods that reference this ServiceAccount.',
      items: { type: 'object', description: 'LocalObjectReference contains enough information to let you locate the referenced object inside the same namespace.', 'x-kubernetes-map-type': 'atomic', properties: { name: str('Name of the referent.') } },
      'x-kubernetes-list-type': 'atomic',
    },
    metadata: objectMetaProperty(),
    secrets: {
      type: 'array',
      description: 'Secrets is a list of the secrets in the same namespace that pods running using this ServiceAccount are allowed to use.',
      items: objectReference,
      'x-kubernetes-patch-merge-key': 'name',
      'x-kubernetes-patch-strategy': 'merge',
    },
  },
};

/** authentication.k8s.io/v1 TokenRequest. */
export const tokenRequestSchema: StructuralSchema = {
  type: 'object',
  description: 'TokenRequest requests a token for a given service account.',
  required: ['spec'],
  properties: {
    ...typeMetaProperties(),
    metadata: objectMetaProperty(),
    spec: {
      type: 'object',
      description: 'Spec holds information about the request being evaluated',
      required: ['audiences'],
      properties: {
        audiences: strings('Audiences are the intendend audiences of the token.'),
        boundObjectRef: {
          type: 'object',
          description: 'BoundObjectRef is a reference to an object that the token will be bound to.',
          properties: { apiVersion: str('API version of the referent.'), kind: str("Kind of the referent. Valid kinds are 'Pod' and 'Secret'."), name: str('Name of the referent.'), uid: str('UID of the referent.') },
        },
        expirationSeconds: { type: 'integer', format: 'int64', description: 'ExpirationSeconds is the requested duration of validity of the request.' },
      },
    },
    status: {
      type: 'object',
      description: 'Status is filled in by the server and indicates whether the token can be authenticated.',
      required: ['token', 'expirationTimestamp'],
      properties: { expirationTimestamp: { ...timeSchema, description: 'ExpirationTimestamp is the time of expiration of the returned token.' }, token: str('Token is the opaque bearer token.') },
    },
  },
};

const userInfo: StructuralSchema = {
  type: 'object',
  description: 'UserInfo holds the information about the user needed to implement the user.Info interface.',
  properties: {
    extra: { type: 'object', description: 'Any additional information provided by the authenticator.', additionalProperties: strings('ExtraValue masks the value so protobuf can generate') },
    groups: strings('The names of groups this user is a part of.'),
    uid: str('A unique value that identifies this user across time.'),
    username: str('The name that uniquely identifies this user among all active users.'),
  },
};

/** authentication.k8s.io/v1 TokenReview. */
export const tokenReviewSchema: StructuralSchema = {
  type: 'object',
  description: 'TokenReview attempts to authenticate a token to a known user.',
  required: ['spec'],
  properties: {
    ...typeMetaProperties(),
    metadata: objectMetaProperty(),
    spec: {
      type: 'object',
      description: 'Spec holds information about the request being evaluated',
      properties: { audiences: strings('Audiences is a list of the identifiers that the resource server presented with the token identifies as.'), token: str('Token is the opaque bearer token.') },
    },
    status: {
      type: 'object',
      description: 'Status is filled in by the server and indicates whether the request can be authenticated.',
      properties: {
        audiences: strings('Audiences are audience identifiers chosen by the authenticator that are compatible with both the TokenReview and token.'),
        authenticated: { type: 'boolean', description: 'Authenticated indicates that the token was associated with a known user.' },
        error: str("Error indicates that the token couldn't be checked"),
        user: userInfo,
      },
    },
  },
};

/** authentication.k8s.io/v1 SelfSubjectReview. */
export const selfSubjectReviewSchema: StructuralSchema = {
  type: 'object',
  description: 'SelfSubjectReview contains the user information that the kube-apiserver has about the user making this request.',
  properties: {
    ...typeMetaProperties(),
    metadata: objectMetaProperty(),
    status: { type: 'object', description: 'Status is filled in by the server with the user attributes.', properties: { userInfo } },
  },
};
