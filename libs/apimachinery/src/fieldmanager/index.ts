/**
 * Server-side apply and managedFields tracking, with upstream's
 * (structured-merge-diff and k8s.io/apimachinery managedfields) semantics.
 * Pure code: no Nest, no I/O.
 */
export { ApplyConflictError, type Conflict, type ConflictCause, printManager } from './apply-conflict.js';
export {
  applyConfiguration,
  ANNOTATIONS_SIZE_LIMIT,
  type FieldManagerScope,
  type JsonObject,
  keepTimestampsWhenUnchanged,
  LAST_APPLIED_ANNOTATION,
  managedFieldsProblem,
  trackUpdate,
} from './field-manager.js';
export { type FieldSchema, listTypeOf, type ObjectType, TypedValueError } from './field-schema.js';
export { canonicalJson, decodeFieldsV1, encodeFieldsV1, FieldsV1Error, pathString } from './fields-v1.js';
export {
  capUpdateManagers,
  decodeManagedFields,
  encodeManagedFields,
  isResetRequest,
  type ManagedFields,
  type ManagedFieldsEntry,
  ManagedFieldsError,
  managerIdentifier,
  MAX_UPDATE_MANAGERS,
} from './managed-fields.js';
export { PathSet } from './path-set.js';
export { compareObjects, mergeObjects, removePaths, toFieldSet, withNamedFieldsAsMembers } from './typed-value.js';
export { managerFromUserAgent } from './user-agent.js';
