/**
 * @plinth/apimachinery: Kubernetes' API machinery without NestJS or SQL, as
 * upstream's k8s.io/apimachinery: object types and JSON helpers, errors and
 * Status, label and field selectors, name and metadata validation, decoding
 * (strict JSON, YAML, protobuf, pruning), patch (JSON, merge, strategic
 * merge), quantity, structural schema, and the request's user.
 */
export * from './auth/user-info.js';
export * from './auth/authorizer.js';
export * from './auth/selector-attributes.js';
export * from './object/kube-object.js';
export * from './object/json-clone.js';
export * from './object/timestamp.js';
export * from './errors/field-error.js';
export * from './errors/api-error.js';
export {
  SelectorError,
  aggregateText,
  invalidValueText,
  labelKeyErrors,
  labelValueErrors,
} from './selector/selector-error.js';
export * from './selector/label-selector.js';
export * from './selector/field-selector.js';
export * from './validation/name-validation.js';
export * from './validation/object-meta.validation.js';
export * from './validation/conditions.validation.js';
export * from './schema/structural-schema.js';
export * from './schema/type-check.js';
export * from './schema/object-order.js';
export * from './text/go-strings.js';
export * from './text/go-duration.js';
export {
  DecodeError,
  type DecodeErrorOptions,
  type DecodePosition,
  type StrictIssue,
  strictDecodingMessage,
} from './decoding/decode-error.js';
export * from './decoding/strict-json.js';
export * from './decoding/storable-json.js';
export * from './decoding/yaml-decode.js';
export * from './decoding/k8s-proto.descriptor.js';
export * from './decoding/protobuf-decode.js';
export * from './decoding/cbor-decode.js';
export * from './decoding/cbor-encode.js';
export * from './decoding/unknown-fields.js';
export * from './decoding/prune.js';
export * from './patch/patch-error.js';
export * from './patch/json-patch.js';
export * from './patch/merge-patch.js';
export * from './patch/strategic-merge-patch.js';
export * from './quantity/quantity.js';
export * from './fieldmanager/index.js';
