import { META_V1_NAMES, listSchemaOf, objectMetaProperty, refTo, timeSchema, typeMetaProperties } from './object-meta.schema.js';
import type { StructuralSchema } from '@plinth/apimachinery';

/** OpenAPI definition names of the core/v1 types defined here. */
export const CORE_V1_NAMES = {
  configMap: 'io.k8s.api.core.v1.ConfigMap',
  configMapList: 'io.k8s.api.core.v1.ConfigMapList',
  secret: 'io.k8s.api.core.v1.Secret',
  secretList: 'io.k8s.api.core.v1.SecretList',
  namespace: 'io.k8s.api.core.v1.Namespace',
  namespaceList: 'io.k8s.api.core.v1.NamespaceList',
  namespaceSpec: 'io.k8s.api.core.v1.NamespaceSpec',
  namespaceStatus: 'io.k8s.api.core.v1.NamespaceStatus',
  namespaceCondition: 'io.k8s.api.core.v1.NamespaceCondition',
} as const;

const SPEC_AND_STATUS = 'https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#spec-and-status';

/** v1 ConfigMap. */
export const configMapSchema: StructuralSchema = {
  type: 'object',
  description: 'ConfigMap holds configuration data for pods to consume.',
  properties: {
    ...typeMetaProperties(),
    binaryData: {
      type: 'object',
      description:
        "BinaryData contains the binary data. Each key must consist of alphanumeric characters, '-', '_' or '.'. BinaryData can contain byte sequences that are not in the UTF-8 range. The keys stored in BinaryData must not overlap with the ones in the Data field, this is enforced during validation process. Using this field will require 1.10+ apiserver and kubelet. Note: BinaryData keys are not currently propagated to container env vars via ConfigMapKeyRef or ConfigMapRef env sources; only Data keys are used.",
      additionalProperties: { type: 'string', format: 'byte' },
    },
    data: {
      type: 'object',
      description:
        "Data contains the configuration data. Each key must consist of alphanumeric characters, '-', '_' or '.'. Values with non-UTF-8 byte sequences must use the BinaryData field. The keys stored in Data must not overlap with the keys in the BinaryData field, this is enforced during validation process.",
      additionalProperties: { type: 'string' },
    },
    immutable: {
      type: 'boolean',
      description:
        'Immutable, if set to true, ensures that data stored in the ConfigMap cannot be updated (only object metadata can be modified). If not set to true, the field can be modified at any time. Defaulted to nil.',
    },
    metadata: objectMetaProperty(),
  },
};

/** v1 ConfigMapList. */
export const configMapListSchema: StructuralSchema = listSchemaOf({
  description: 'ConfigMapList is a resource containing a list of ConfigMap objects.',
  itemsDescription: 'Items is the list of ConfigMaps.',
  itemRef: CORE_V1_NAMES.configMap,
  itemSchema: configMapSchema,
  metadataDescription: 'More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata',
});

/** v1 Secret. */
export const secretSchema: StructuralSchema = {
  type: 'object',
  description: 'Secret holds secret data of a certain type. The total bytes of the values in the Data field must be less than MaxSecretSize bytes.',
  properties: {
    ...typeMetaProperties(),
    data: {
      type: 'object',
      description:
        "Data contains the secret data. Each key must consist of alphanumeric characters, '-', '_' or '.'. The serialized form of the secret data is a base64 encoded string, representing the arbitrary (possibly non-string) data value here. Described in https://tools.ietf.org/html/rfc4648#section-4",
      additionalProperties: { type: 'string', format: 'byte' },
    },
    immutable: {
      type: 'boolean',
      description:
        'Immutable, if set to true, ensures that data stored in the Secret cannot be updated (only object metadata can be modified). If not set to true, the field can be modified at any time. Defaulted to nil.',
    },
    metadata: objectMetaProperty(),
    stringData: {
      type: 'object',
      description:
        'stringData allows specifying non-binary secret data in string form. It is provided as a write-only input field for convenience. All keys and values are merged into the data field on write, overwriting any existing values. The stringData field is never output when reading from the API.',
      additionalProperties: { type: 'string' },
    },
    type: {
      type: 'string',
      description:
        'Used to facilitate programmatic handling of secret data. More info: https://kubernetes.io/docs/concepts/configuration/secret/#secret-types',
    },
  },
};

/** v1 SecretList. */
export const secretListSchema: StructuralSchema = listSchemaOf({
  description: 'SecretList is a list of Secret.',
  itemsDescription: 'Items is a list of secret objects. More info: https://kubernetes.io/docs/concepts/configuration/secret',
  itemRef: CORE_V1_NAMES.secret,
  itemSchema: secretSchema,
});

/** v1 NamespaceSpec. */
export const namespaceSpecSchema: StructuralSchema = {
  type: 'object',
  description: 'NamespaceSpec describes the attributes on a Namespace.',
  properties: {
    finalizers: {
      type: 'array',
      description:
        'Finalizers is an opaque list of values that must be empty to permanently remove object from storage. More info: https://kubernetes.io/docs/tasks/administer-cluster/namespaces/',
      items: { type: 'string' },
      'x-kubernetes-list-type': 'atomic',
    },
  },
};

/** v1 NamespaceCondition. */
export const namespaceConditionSchema: StructuralSchema = {
  type: 'object',
  description: 'NamespaceCondition contains details about state of namespace.',
  required: ['type', 'status'],
  properties: {
    lastTransitionTime: refTo(META_V1_NAMES.time, timeSchema, 'Last time the condition transitioned from one status to another.'),
    message: { type: 'string', description: 'Human-readable message indicating details about last transition.' },
    reason: { type: 'string', description: "Unique, one-word, CamelCase reason for the condition's last transition." },
    status: { type: 'string', description: 'Status of the condition, one of True, False, Unknown.' },
    type: { type: 'string', description: 'Type of namespace controller condition.' },
  },
};

/** v1 NamespaceStatus. */
export const namespaceStatusSchema: StructuralSchema = {
  type: 'object',
  description: 'NamespaceStatus is information about the current status of a Namespace.',
  properties: {
    conditions: {
      type: 'array',
      description: "Represents the latest available observations of a namespace's current state.",
      items: refTo(CORE_V1_NAMES.namespaceCondition, namespaceConditionSchema),
      'x-kubernetes-list-map-keys': ['type'],
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-patch-merge-key': 'type',
      'x-kubernetes-patch-strategy': 'merge',
    },
    phase: {
      type: 'string',
      description:
        'Phase is the current lifecycle phase of the namespace. More info: https://kubernetes.io/docs/tasks/administer-cluster/namespaces/\n\nPossible enum values:\n - `"Active"` means the namespace is available for use in the system\n - `"Terminating"` means the namespace is undergoing graceful termination',
      enum: ['Active', 'Terminating'],
    },
  },
};

/** v1 Namespace. */
export const namespaceSchema: StructuralSchema = {
  type: 'object',
  description: 'Namespace provides a scope for Names. Use of multiple namespaces is optional.',
  properties: {
    ...typeMetaProperties(),
    metadata: objectMetaProperty(),
    spec: refTo(CORE_V1_NAMES.namespaceSpec, namespaceSpecSchema, `Spec defines the behavior of the Namespace. More info: ${SPEC_AND_STATUS}`),
    status: refTo(CORE_V1_NAMES.namespaceStatus, namespaceStatusSchema, `Status describes the current status of a Namespace. More info: ${SPEC_AND_STATUS}`),
  },
};

/** v1 NamespaceList. */
export const namespaceListSchema: StructuralSchema = listSchemaOf({
  description: 'NamespaceList is a list of Namespaces.',
  itemsDescription:
    'Items is the list of Namespace objects in the list. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/namespaces/',
  itemRef: CORE_V1_NAMES.namespace,
  itemSchema: namespaceSchema,
});
