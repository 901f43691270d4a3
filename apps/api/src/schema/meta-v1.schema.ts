import { LIST_METADATA_FIELD_DESCRIPTION, META_V1_NAMES, listMetaSchema, refTo, typeMetaProperties } from './object-meta.schema.js';
import type { StructuralSchema } from '@plinth/apimachinery';

/** metav1.StatusCause. */
export const statusCauseSchema: StructuralSchema = {
  type: 'object',
  description: 'StatusCause provides more information about an api.Status failure, including cases when multiple errors are encountered.',
  properties: {
    field: {
      type: 'string',
      description:
        'The field of the resource that has caused this error, as named by its JSON serialization. May include dot and postfix notation for nested attributes. Arrays are zero-indexed.  Fields may appear more than once in an array of causes due to fields having multiple errors. Optional.\n\nExamples:\n  "name" - the field "name" on the current resource\n  "items[0].name" - the field "name" on the first array entry in "items"',
    },
    message: { type: 'string', description: 'A human-readable description of the cause of the error.  This field may be presented as-is to a reader.' },
    reason: {
      type: 'string',
      description: 'A machine-readable description of the cause of the error. If this value is empty there is no information available.',
    },
  },
};

/** metav1.StatusDetails. */
export const statusDetailsSchema: StructuralSchema = {
  type: 'object',
  description:
    'StatusDetails is a set of additional properties that MAY be set by the server to provide additional information about a response. The Reason field of a Status object defines what attributes will be set. Clients must ignore fields that do not match the defined type of each attribute, and should assume that any attribute may be empty, invalid, or under defined.',
  properties: {
    causes: {
      type: 'array',
      description: 'The Causes array includes more details associated with the StatusReason failure. Not all StatusReasons may provide detailed causes.',
      items: refTo(META_V1_NAMES.statusCause, statusCauseSchema),
      'x-kubernetes-list-type': 'atomic',
    },
    group: { type: 'string', description: 'The group attribute of the resource associated with the status StatusReason.' },
    kind: {
      type: 'string',
      description:
        'The kind attribute of the resource associated with the status StatusReason. On some operations may differ from the requested resource Kind. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds',
    },
    name: {
      type: 'string',
      description: 'The name attribute of the resource associated with the status StatusReason (when there is a single name which can be described).',
    },
    retryAfterSeconds: {
      type: 'integer',
      format: 'int32',
      description:
        'If specified, the time in seconds before the operation should be retried. Some errors may indicate the client must take an alternate action - for those errors this field may indicate how long to wait before taking the alternate action.',
    },
    uid: {
      type: 'string',
      description:
        'UID of the resource. (when there is a single resource which can be described). More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#uids',
    },
  },
};

/** metav1.Status, the body of every error response. */
export const statusSchema: StructuralSchema = {
  type: 'object',
  description: "Status is a return value for calls that don't return other objects.",
  properties: {
    ...typeMetaProperties(),
    code: { type: 'integer', format: 'int32', description: 'Suggested HTTP return code for this status, 0 if not set.' },
    details: refTo(
      META_V1_NAMES.statusDetails,
      statusDetailsSchema,
      'Extended data associated with the reason.  Each reason may define its own extended details. This field is optional and the data returned is not guaranteed to conform to any schema except that defined by the reason type.',
    ),
    message: { type: 'string', description: 'A human-readable description of the status of this operation.' },
    metadata: refTo(META_V1_NAMES.listMeta, listMetaSchema, LIST_METADATA_FIELD_DESCRIPTION),
    reason: {
      type: 'string',
      description:
        'A machine-readable description of why this operation is in the "Failure" status. If this value is empty there is no information available. A Reason clarifies an HTTP status code but does not override it.',
    },
    status: {
      type: 'string',
      description:
        'Status of the operation. One of: "Success" or "Failure". More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#spec-and-status',
    },
  },
};

/** metav1.Preconditions. */
export const preconditionsSchema: StructuralSchema = {
  type: 'object',
  description: 'Preconditions must be fulfilled before an operation (update, delete, etc.) is carried out.',
  properties: {
    resourceVersion: { type: 'string', description: 'Specifies the target ResourceVersion' },
    uid: { type: 'string', description: 'Specifies the target UID.' },
  },
};

/** Upstream's DeleteOptions field texts, reused by the delete query parameters. */
export const DELETE_OPTIONS_DESCRIPTIONS = {
  dryRun:
    'When present, indicates that modifications should not be persisted. An invalid or unrecognized dryRun directive will result in an error response and no further processing of the request. Valid values are: - All: all dry run stages will be processed',
  gracePeriodSeconds:
    'The duration in seconds before the object should be deleted. Value must be non-negative integer. The value zero indicates delete immediately. If this value is nil, the default grace period for the specified type will be used. Defaults to a per object value if not specified. zero means delete immediately.',
  ignoreStoreReadErrorWithClusterBreakingPotential:
    'if set to true, it will trigger an unsafe deletion of the resource in case the normal deletion flow fails with a corrupt object error. A resource is considered corrupt if it can not be retrieved from the underlying storage successfully because of a) its data can not be transformed e.g. decryption failure, or b) it fails to decode into an object. NOTE: unsafe deletion ignores finalizer constraints, skips precondition checks, and removes the object from the storage. WARNING: This may potentially break the cluster if the workload associated with the resource being unsafe-deleted relies on normal deletion flow. Use only if you REALLY know what you are doing. The default value is false, and the user must opt in to enable it',
  orphanDependents:
    'Deprecated: please use the PropagationPolicy, this field will be deprecated in 1.7. Should the dependent objects be orphaned. If true/false, the "orphan" finalizer will be added to/removed from the object\'s finalizers list. Either this field or PropagationPolicy may be set, but not both.',
  preconditions: 'Must be fulfilled before a deletion is carried out. If not possible, a 409 Conflict status will be returned.',
  propagationPolicy:
    "Whether and how garbage collection will be performed. Either this field or OrphanDependents may be set, but not both. The default policy is decided by the existing finalizer set in the metadata.finalizers and the resource-specific default policy. Acceptable values are: 'Orphan' - orphan the dependents; 'Background' - allow the garbage collector to delete the dependents in the background; 'Foreground' - a cascading policy that deletes all dependents in the foreground.",
} as const;

/** metav1.DeleteOptions, the optional body of DELETE requests. */
export const deleteOptionsSchema: StructuralSchema = {
  type: 'object',
  description: 'DeleteOptions may be provided when deleting an API object.',
  properties: {
    ...typeMetaProperties(),
    dryRun: { type: 'array', description: DELETE_OPTIONS_DESCRIPTIONS.dryRun, items: { type: 'string' }, 'x-kubernetes-list-type': 'atomic' },
    gracePeriodSeconds: { type: 'integer', format: 'int64', description: DELETE_OPTIONS_DESCRIPTIONS.gracePeriodSeconds },
    ignoreStoreReadErrorWithClusterBreakingPotential: {
      type: 'boolean',
      description: DELETE_OPTIONS_DESCRIPTIONS.ignoreStoreReadErrorWithClusterBreakingPotential,
    },
    orphanDependents: { type: 'boolean', description: DELETE_OPTIONS_DESCRIPTIONS.orphanDependents },
    preconditions: refTo(META_V1_NAMES.preconditions, preconditionsSchema, DELETE_OPTIONS_DESCRIPTIONS.preconditions),
    propagationPolicy: { type: 'string', description: DELETE_OPTIONS_DESCRIPTIONS.propagationPolicy },
  },
};

/** runtime.RawExtension as published: an untyped object. */
export const rawExtensionSchema: StructuralSchema = {
  type: 'object',
  description: 'RawExtension is used to hold extensions in external versions.',
};

/** metav1.WatchEvent, one frame of a watch stream. */
export const watchEventSchema: StructuralSchema = {
  type: 'object',
  description: 'Event represents a single event to a watched resource.',
  required: ['type', 'object'],
  properties: {
    object: refTo(
      META_V1_NAMES.rawExtension,
      { ...rawExtensionSchema, 'x-kubernetes-preserve-unknown-fields': true },
      'Object is:\n * If Type is Added or Modified: the new state of the object.\n * If Type is Deleted: the state of the object immediately before deletion.\n * If Type is Error: *Status is recommended; other types may make sense\n   depending on context.',
    ),
    type: { type: 'string' },
  },
};

/** metav1.Patch, the nominal type of every PATCH body. */
export const patchSchema: StructuralSchema = {
  type: 'object',
  description: 'Patch is provided to give a concrete name and type to the Kubernetes PATCH request body.',
};
