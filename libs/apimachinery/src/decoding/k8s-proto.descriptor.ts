import protobuf from 'protobufjs';

/*
 * Hand transcription of the Kubernetes protobuf messages Plinth decodes. Field numbers and types follow
 * k8s.io/apimachinery pkg/runtime/generated.proto and pkg/apis/meta/v1/generated.proto, and k8s.io/api
 * core/v1, autoscaling/v1, admissionregistration/v1, authentication/v1, rbac/v1, authorization/v1 and certificates/v1 generated.proto. Fields are listed in the order
 * of the Go struct, which is the order Go's JSON encoder emits them in.
 *
 * Each field carries the facts of its Go field that decide its JSON form:
 *   (json) - the Go `json:"…"` tag verbatim (`,inline` for an embedded struct);
 *   (ptr)  - the Go field is a pointer, so presence on the wire decides whether it is emitted;
 *   (go)   - the Go field name where it is not the proto name capitalised (used in wire-type errors).
 */

const RUNTIME = `
syntax = "proto2";
package k8s.io.apimachinery.pkg.runtime;

message TypeMeta {
  optional string apiVersion = 1 [(json) = "apiVersion,omitempty", (go) = "APIVersion"];
  optional string kind = 2 [(json) = "kind,omitempty"];
}

message Unknown {
  optional TypeMeta typeMeta = 1 [(json) = ",inline"];
  optional bytes raw = 2 [(json) = "-"];
  optional string contentEncoding = 3 [(json) = "-"];
  optional string contentType = 4 [(json) = "-"];
}
`;

const META_V1 = `
syntax = "proto2";
package k8s.io.apimachinery.pkg.apis.meta.v1;

message Time {
  optional int64 seconds = 1 [(json) = "seconds"];
  optional int32 nanos = 2 [(json) = "nanos"];
}

message FieldsV1 {
  optional bytes Raw = 1 [(json) = "-"];
}

message OwnerReference {
  optional string apiVersion = 5 [(json) = "apiVersion", (go) = "APIVersion"];
  optional string kind = 1 [(json) = "kind"];
  optional string name = 3 [(json) = "name"];
  optional string uid = 4 [(json) = "uid", (go) = "UID"];
  optional bool controller = 6 [(json) = "controller,omitempty", (ptr) = true];
  optional bool blockOwnerDeletion = 7 [(json) = "blockOwnerDeletion,omitempty", (ptr) = true];
}

message ManagedFieldsEntry {
  optional string manager = 1 [(json) = "manager,omitempty"];
  optional string operation = 2 [(json) = "operation,omitempty"];
  optional string apiVersion = 3 [(json) = "apiVersion,omitempty", (go) = "APIVersion"];
  optional Time time = 4 [(json) = "time,omitempty", (ptr) = true];
  optional string fieldsType = 6 [(json) = "fieldsType,omitempty"];
  optional FieldsV1 fieldsV1 = 7 [(json) = "fieldsV1,omitempty", (ptr) = true];
  optional string subresource = 8 [(json) = "subresource,omitempty"];
}

message ObjectMeta {
  optional string name = 1 [(json) = "name,omitempty"];
  optional string generateName = 2 [(json) = "generateName,omitempty"];
  optional string namespace = 3 [(json) = "namespace,omitempty"];
  optional string selfLink = 4 [(json) = "selfLink,omitempty"];
  optional string uid = 5 [(json) = "uid,omitempty", (go) = "UID"];
  optional string resourceVersion = 6 [(json) = "resourceVersion,omitempty"];
  optional int64 generation = 7 [(json) = "generation,omitempty"];
  optional Time creationTimestamp = 8 [(json) = "creationTimestamp,omitempty,omitzero"];
  optional Time deletionTimestamp = 9 [(json) = "deletionTimestamp,omitempty", (ptr) = true];
  optional int64 deletionGracePeriodSeconds = 10 [(json) = "deletionGracePeriodSeconds,omitempty", (ptr) = true];
  map<string, string> labels = 11 [(json) = "labels,omitempty"];
  map<string, string> annotations = 12 [(json) = "annotations,omitempty"];
  repeated OwnerReference ownerReferences = 13 [(json) = "ownerReferences,omitempty"];
  repeated string finalizers = 14 [(json) = "finalizers,omitempty"];
  repeated ManagedFieldsEntry managedFields = 17 [(json) = "managedFields,omitempty"];
}

message Preconditions {
  optional string uid = 1 [(json) = "uid,omitempty", (ptr) = true, (go) = "UID"];
  optional string resourceVersion = 2 [(json) = "resourceVersion,omitempty", (ptr) = true];
}

message DeleteOptions {
  optional int64 gracePeriodSeconds = 1 [(json) = "gracePeriodSeconds,omitempty", (ptr) = true];
  optional Preconditions preconditions = 2 [(json) = "preconditions,omitempty", (ptr) = true];
  optional bool orphanDependents = 3 [(json) = "orphanDependents,omitempty", (ptr) = true];
  optional string propagationPolicy = 4 [(json) = "propagationPolicy,omitempty", (ptr) = true];
  repeated string dryRun = 5 [(json) = "dryRun,omitempty"];
  optional bool ignoreStoreReadErrorWithClusterBreakingPotential = 6 [(json) = "ignoreStoreReadErrorWithClusterBreakingPotential,omitempty", (ptr) = true];
}

message LabelSelectorRequirement {
  optional string key = 1 [(json) = "key"];
  optional string operator = 2 [(json) = "operator"];
  repeated string values = 3 [(json) = "values,omitempty"];
}

message LabelSelector {
  map<string, string> matchLabels = 1 [(json) = "matchLabels,omitempty"];
  repeated LabelSelectorRequirement matchExpressions = 2 [(json) = "matchExpressions,omitempty"];
}
`;

const RESOURCE = `
syntax = "proto2";
package k8s.io.apimachinery.pkg.api.resource;

message Quantity {
  optional string string = 1 [(json) = "string"];
}
`;

const QUANTITY = '.k8s.io.apimachinery.pkg.api.resource.Quantity';
const OBJECT_META = '.k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta';
const TIME = '.k8s.io.apimachinery.pkg.apis.meta.v1.Time';
const LABEL_SELECTOR = '.k8s.io.apimachinery.pkg.apis.meta.v1.LabelSelector';

const CORE_V1 = `
syntax = "proto2";
package k8s.io.api.core.v1;

message NamespaceSpec {
  repeated string finalizers = 1 [(json) = "finalizers,omitempty"];
}

message NamespaceCondition {
  optional string type = 1 [(json) = "type"];
  optional string status = 2 [(json) = "status"];
  optional ${TIME} lastTransitionTime = 4 [(json) = "lastTransitionTime,omitempty"];
  optional string reason = 5 [(json) = "reason,omitempty"];
  optional string message = 6 [(json) = "message,omitempty"];
}

message NamespaceStatus {
  optional string phase = 1 [(json) = "phase,omitempty"];
  repeated NamespaceCondition conditions = 2 [(json) = "conditions,omitempty"];
}

message Namespace {
  optional ${OBJECT_META} metadata = 1 [(json) = "metadata,omitempty"];
  optional NamespaceSpec spec = 2 [(json) = "spec,omitempty"];
  optional NamespaceStatus status = 3 [(json) = "status,omitempty"];
}

message ConfigMap {
  optional ${OBJECT_META} metadata = 1 [(json) = "metadata,omitempty"];
  optional bool immutable = 4 [(json) = "immutable,omitempty", (ptr) = true];
  map<string, string> data = 2 [(json) = "data,omitempty"];
  map<string, bytes> binaryData = 3 [(json) = "binaryData,omitempty"];
}

message ObjectReference {
  optional string kind = 1 [(json) = "kind,omitempty"];
  optional string namespace = 2 [(json) = "namespace,omitempty"];
  optional string name = 3 [(json) = "name,omitempty"];
  optional string uid = 4 [(json) = "uid,omitempty", (go) = "UID"];
  optional string apiVersion = 5 [(json) = "apiVersion,omitempty", (go) = "APIVersion"];
  optional string resourceVersion = 6 [(json) = "resourceVersion,omitempty"];
  optional string fieldPath = 7 [(json) = "fieldPath,omitempty"];
}

message LocalObjectReference {
  optional string name = 1 [(json) = "name,omitempty"];
}

message ServiceAccount {
  optional ${OBJECT_META} metadata = 1 [(json) = "metadata,omitempty"];
  repeated ObjectReference secrets = 2 [(json) = "secrets,omitempty"];
  repeated LocalObjectReference imagePullSecrets = 3 [(json) = "imagePullSecrets,omitempty"];
  optional bool automountServiceAccountToken = 4 [(json) = "automountServiceAccountToken,omitempty", (ptr) = true];
}

message ScopedResourceSelectorRequirement {
  optional string scopeName = 1 [(json) = "scopeName"];
  optional string operator = 2 [(json) = "operator"];
  repeated string values = 3 [(json) = "values,omitempty"];
}

message ScopeSelector {
  repeated ScopedResourceSelectorRequirement matchExpressions = 1 [(json) = "matchExpressions,omitempty"];
}

message ResourceQuotaSpec {
  map<string, ${QUANTITY}> hard = 1 [(json) = "hard,omitempty"];
  repeated string scopes = 2 [(json) = "scopes,omitempty"];
  optional ScopeSelector scopeSelector = 3 [(json) = "scopeSelector,omitempty"];
}

message ResourceQuotaStatus {
  map<string, ${QUANTITY}> hard = 1 [(json) = "hard,omitempty"];
  map<string, ${QUANTITY}> used = 2 [(json) = "used,omitempty"];
}

message ResourceQuota {
  optional ${OBJECT_META} metadata = 1 [(json) = "metadata,omitempty"];
  optional ResourceQuotaSpec spec = 2 [(json) = "spec,omitempty"];
  optional ResourceQuotaStatus status = 3 [(json) = "status,omitempty"];
}

message Secret {
  optional ${OBJECT_META} metadata = 1 [(json) = "metadata,omitempty"];
  optional bool immutable = 5 [(json) = "immutable,omitempty", (ptr) = true];
  map<string, bytes> data = 2 [(json) = "data,omitempty"];
  map<string, string> stringData = 4 [(json) = "stringData,omitempty"];
  optional string type = 3 [(json) = "type,omitempty"];
}
`;

const AUTOSCALING_V1 = `
syntax = "proto2";
package k8s.io.api.autoscaling.v1;

message ScaleSpec {
  optional int32 replicas = 1 [(json) = "replicas,omitempty"];
}

message ScaleStatus {
  optional int32 replicas = 1 [(json) = "replicas"];
  optional string selector = 2 [(json) = "selector,omitempty"];
}

message Scale {
  optional ${OBJECT_META} metadata = 1 [(json) = "metadata,omitempty"];
  optional ScaleSpec spec = 2 [(json) = "spec,omitempty"];
  optional ScaleStatus status = 3 [(json) = "status,omitempty"];
}
`;

const AUTHENTICATION_V1 = `
syntax = "proto2";
package k8s.io.api.authentication.v1;

message BoundObjectReference {
  optional string kind = 1 [(json) = "kind,omitempty"];
  optional string apiVersion = 2 [(json) = "apiVersion,omitempty", (go) = "APIVersion"];
  optional string name = 3 [(json) = "name,omitempty"];
  optional string uid = 4 [(json) = "uid,omitempty", (go) = "UID"];
}

message TokenRequestSpec {
  repeated string audiences = 1 [(json) = "audiences"];
  optional int64 expirationSeconds = 4 [(json) = "expirationSeconds", (ptr) = true];
  optional BoundObjectReference boundObjectRef = 3 [(json) = "boundObjectRef", (ptr) = true];
}

message TokenRequest {
  optional ${OBJECT_META} metadata = 1 [(json) = "metadata,omitempty"];
  optional TokenRequestSpec spec = 2 [(json) = "spec"];
}

message TokenReviewSpec {
  optional string token = 1 [(json) = "token,omitempty"];
  repeated string audiences = 2 [(json) = "audiences,omitempty"];
}

message TokenReview {
  optional ${OBJECT_META} metadata = 1 [(json) = "metadata,omitempty"];
  optional TokenReviewSpec spec = 2 [(json) = "spec"];
}

message SelfSubjectReview {
  optional ${OBJECT_META} metadata = 1 [(json) = "metadata,omitempty"];
}
`;

/** The fields MutatingWebhook and ValidatingWebhook share up to admissionReviewVersions. */
function webhookFields(objectSelector: number): string {
  return `
  optional string name = 1 [(json) = "name"];
  optional WebhookClientConfig clientConfig = 2 [(json) = "clientConfig"];
  repeated RuleWithOperations rules = 3 [(json) = "rules,omitempty"];
  optional string failurePolicy = 4 [(json) = "failurePolicy,omitempty", (ptr) = true];
  optional string matchPolicy = 9 [(json) = "matchPolicy,omitempty", (ptr) = true];
  optional ${LABEL_SELECTOR} namespaceSelector = 5 [(json) = "namespaceSelector,omitempty", (ptr) = true];
  optional ${LABEL_SELECTOR} objectSelector = ${objectSelector} [(json) = "objectSelector,omitempty", (ptr) = true];
  optional string sideEffects = 6 [(json) = "sideEffects", (ptr) = true];
  optional int32 timeoutSeconds = 7 [(json) = "timeoutSeconds,omitempty", (ptr) = true];
  repeated string admissionReviewVersions = 8 [(json) = "admissionReviewVersions"];`;
}

const ADMISSIONREGISTRATION_V1 = `
syntax = "proto2";
package k8s.io.api.admissionregistration.v1;

message ServiceReference {
  optional string namespace = 1 [(json) = "namespace"];
  optional string name = 2 [(json) = "name"];
  optional string path = 3 [(json) = "path,omitempty", (ptr) = true];
  optional int32 port = 4 [(json) = "port,omitempty", (ptr) = true];
}

message WebhookClientConfig {
  optional string url = 3 [(json) = "url,omitempty", (ptr) = true, (go) = "URL"];
  optional ServiceReference service = 1 [(json) = "service,omitempty", (ptr) = true];
  optional bytes caBundle = 2 [(json) = "caBundle,omitempty", (go) = "CABundle"];
}

message Rule {
  repeated string apiGroups = 1 [(json) = "apiGroups,omitempty", (go) = "APIGroups"];
  repeated string apiVersions = 2 [(json) = "apiVersions,omitempty", (go) = "APIVersions"];
  repeated string resources = 3 [(json) = "resources,omitempty"];
  optional string scope = 4 [(json) = "scope,omitempty", (ptr) = true];
}

message RuleWithOperations {
  repeated string operations = 1 [(json) = "operations,omitempty"];
  optional Rule rule = 2 [(json) = ",inline"];
}

message MatchCondition {
  optional string name = 1 [(json) = "name"];
  optional string expression = 2 [(json) = "expression"];
}

message MutatingWebhook {${webhookFields(11)}
  optional string reinvocationPolicy = 10 [(json) = "reinvocationPolicy,omitempty", (ptr) = true];
  repeated MatchCondition matchConditions = 12 [(json) = "matchConditions,omitempty"];
}

message ValidatingWebhook {${webhookFields(10)}
  repeated MatchCondition matchConditions = 11 [(json) = "matchConditions,omitempty"];
}

message MutatingWebhookConfiguration {
  optional ${OBJECT_META} metadata = 1 [(json) = "metadata,omitempty"];
  repeated MutatingWebhook Webhooks = 2 [(json) = "webhooks,omitempty"];
}

message ValidatingWebhookConfiguration {
  optional ${OBJECT_META} metadata = 1 [(json) = "metadata,omitempty"];
  repeated ValidatingWebhook Webhooks = 2 [(json) = "webhooks,omitempty"];
}
`;

const RBAC_V1 = `
syntax = "proto2";
package k8s.io.api.rbac.v1;

message PolicyRule {
  repeated string verbs = 1 [(json) = "verbs"];
  repeated string apiGroups = 2 [(json) = "apiGroups,omitempty", (go) = "APIGroups"];
  repeated string resources = 3 [(json) = "resources,omitempty"];
  repeated string resourceNames = 4 [(json) = "resourceNames,omitempty"];
  repeated string nonResourceURLs = 5 [(json) = "nonResourceURLs,omitempty", (go) = "NonResourceURLs"];
}

message Subject {
  optional string kind = 1 [(json) = "kind"];
  optional string apiGroup = 2 [(json) = "apiGroup,omitempty", (go) = "APIGroup"];
  optional string name = 3 [(json) = "name"];
  optional string namespace = 4 [(json) = "namespace,omitempty"];
}

message RoleRef {
  optional string apiGroup = 1 [(json) = "apiGroup", (go) = "APIGroup"];
  optional string kind = 2 [(json) = "kind"];
  optional string name = 3 [(json) = "name"];
}

message AggregationRule {
  repeated ${LABEL_SELECTOR} clusterRoleSelectors = 1 [(json) = "clusterRoleSelectors,omitempty"];
}

message Role {
  optional ${OBJECT_META} metadata = 1 [(json) = "metadata,omitempty"];
  repeated PolicyRule rules = 2 [(json) = "rules"];
}

message ClusterRole {
  optional ${OBJECT_META} metadata = 1 [(json) = "metadata,omitempty"];
  repeated PolicyRule rules = 2 [(json) = "rules"];
  optional AggregationRule aggregationRule = 3 [(json) = "aggregationRule,omitempty", (ptr) = true];
}

message RoleBinding {
  optional ${OBJECT_META} metadata = 1 [(json) = "metadata,omitempty"];
  repeated Subject subjects = 2 [(json) = "subjects,omitempty"];
  optional RoleRef roleRef = 3 [(json) = "roleRef"];
}

message ClusterRoleBinding {
  optional ${OBJECT_META} metadata = 1 [(json) = "metadata,omitempty"];
  repeated Subject subjects = 2 [(json) = "subjects,omitempty"];
  optional RoleRef roleRef = 3 [(json) = "roleRef"];
}
`;

const AUTHORIZATION_V1 = `
syntax = "proto2";
package k8s.io.api.authorization.v1;

message ResourceAttributes {
  optional string namespace = 1 [(json) = "namespace,omitempty"];
  optional string verb = 2 [(json) = "verb,omitempty"];
  optional string group = 3 [(json) = "group,omitempty"];
  optional string version = 4 [(json) = "version,omitempty"];
  optional string resource = 5 [(json) = "resource,omitempty"];
  optional string subresource = 6 [(json) = "subresource,omitempty"];
  optional string name = 7 [(json) = "name,omitempty"];
}

message NonResourceAttributes {
  optional string path = 1 [(json) = "path,omitempty"];
  optional string verb = 2 [(json) = "verb,omitempty"];
}

message SubjectAccessReviewStatus {
  optional bool allowed = 1 [(json) = "allowed"];
  optional bool denied = 4 [(json) = "denied,omitempty"];
  optional string reason = 2 [(json) = "reason,omitempty"];
  optional string evaluationError = 3 [(json) = "evaluationError,omitempty"];
}

message SelfSubjectAccessReviewSpec {
  optional ResourceAttributes resourceAttributes = 1 [(json) = "resourceAttributes,omitempty", (ptr) = true];
  optional NonResourceAttributes nonResourceAttributes = 2 [(json) = "nonResourceAttributes,omitempty", (ptr) = true];
}

message SubjectAccessReviewSpec {
  optional ResourceAttributes resourceAttributes = 1 [(json) = "resourceAttributes,omitempty", (ptr) = true];
  optional NonResourceAttributes nonResourceAttributes = 2 [(json) = "nonResourceAttributes,omitempty", (ptr) = true];
  optional string user = 3 [(json) = "user,omitempty"];
  repeated string groups = 4 [(json) = "groups,omitempty"];
  optional string uid = 6 [(json) = "uid,omitempty", (go) = "UID"];
}

message SelfSubjectAccessReview {
  optional ${OBJECT_META} metadata = 1 [(json) = "metadata,omitempty"];
  optional SelfSubjectAccessReviewSpec spec = 2 [(json) = "spec"];
  optional SubjectAccessReviewStatus status = 3 [(json) = "status,omitempty"];
}

message SubjectAccessReview {
  optional ${OBJECT_META} metadata = 1 [(json) = "metadata,omitempty"];
  optional SubjectAccessReviewSpec spec = 2 [(json) = "spec"];
  optional SubjectAccessReviewStatus status = 3 [(json) = "status,omitempty"];
}

message LocalSubjectAccessReview {
  optional ${OBJECT_META} metadata = 1 [(json) = "metadata,omitempty"];
  optional SubjectAccessReviewSpec spec = 2 [(json) = "spec"];
  optional SubjectAccessReviewStatus status = 3 [(json) = "status,omitempty"];
}

message SelfSubjectRulesReviewSpec {
  optional string namespace = 1 [(json) = "namespace,omitempty"];
}

message SelfSubjectRulesReview {
  optional ${OBJECT_META} metadata = 1 [(json) = "metadata,omitempty"];
  optional SelfSubjectRulesReviewSpec spec = 2 [(json) = "spec"];
}
`;

// spec.extra (6, map<string, ExtraValue>) is left out: the server stamps it from the requester and ignores a client's.
const CERTIFICATES_V1 = `
syntax = "proto2";
package k8s.io.api.certificates.v1;

message CertificateSigningRequestSpec {
  optional bytes request = 1 [(json) = "request"];
  optional string signerName = 7 [(json) = "signerName"];
  optional int32 expirationSeconds = 8 [(json) = "expirationSeconds,omitempty", (ptr) = true];
  repeated string usages = 5 [(json) = "usages,omitempty"];
  optional string username = 2 [(json) = "username,omitempty"];
  optional string uid = 3 [(json) = "uid,omitempty", (go) = "UID"];
  repeated string groups = 4 [(json) = "groups,omitempty"];
}

message CertificateSigningRequestCondition {
  optional string type = 1 [(json) = "type"];
  optional string status = 6 [(json) = "status"];
  optional string reason = 2 [(json) = "reason,omitempty"];
  optional string message = 3 [(json) = "message,omitempty"];
  optional ${TIME} lastUpdateTime = 4 [(json) = "lastUpdateTime,omitempty"];
  optional ${TIME} lastTransitionTime = 5 [(json) = "lastTransitionTime,omitempty"];
}

message CertificateSigningRequestStatus {
  repeated CertificateSigningRequestCondition conditions = 1 [(json) = "conditions,omitempty"];
  optional bytes certificate = 2 [(json) = "certificate,omitempty"];
}

message CertificateSigningRequest {
  optional ${OBJECT_META} metadata = 1 [(json) = "metadata,omitempty"];
  optional CertificateSigningRequestSpec spec = 2 [(json) = "spec"];
  optional CertificateSigningRequestStatus status = 3 [(json) = "status,omitempty"];
}
`;

/** Fully qualified name of the Unknown envelope message. */
export const UNKNOWN_MESSAGE = 'k8s.io.apimachinery.pkg.runtime.Unknown';

/** Fully qualified name of metav1.Time, whose JSON form is an RFC 3339 string rather than its fields. */
export const TIME_MESSAGE = TIME.slice(1);
/** Fully qualified name of metav1.FieldsV1, whose JSON form is its raw bytes parsed as JSON. */
export const FIELDS_V1_MESSAGE = 'k8s.io.apimachinery.pkg.apis.meta.v1.FieldsV1';
/** Fully qualified name of resource.Quantity, whose JSON form is its string. */
export const QUANTITY_MESSAGE = QUANTITY.slice(1);

/** Message of each decodable `apiVersion/kind`; DeleteOptions is looked up separately (any version). */
const KIND_MESSAGES: ReadonlyMap<string, string> = new Map([
  ['v1/Namespace', 'k8s.io.api.core.v1.Namespace'],
  ['v1/ConfigMap', 'k8s.io.api.core.v1.ConfigMap'],
  ['v1/Secret', 'k8s.io.api.core.v1.Secret'],
  ['v1/ResourceQuota', 'k8s.io.api.core.v1.ResourceQuota'],
  ['v1/ServiceAccount', 'k8s.io.api.core.v1.ServiceAccount'],
  ['authentication.k8s.io/v1/TokenRequest', 'k8s.io.api.authentication.v1.TokenRequest'],
  ['authentication.k8s.io/v1/TokenReview', 'k8s.io.api.authentication.v1.TokenReview'],
  ['authentication.k8s.io/v1/SelfSubjectReview', 'k8s.io.api.authentication.v1.SelfSubjectReview'],
  ['autoscaling/v1/Scale', 'k8s.io.api.autoscaling.v1.Scale'],
  ['admissionregistration.k8s.io/v1/MutatingWebhookConfiguration', 'k8s.io.api.admissionregistration.v1.MutatingWebhookConfiguration'],
  ['admissionregistration.k8s.io/v1/ValidatingWebhookConfiguration', 'k8s.io.api.admissionregistration.v1.ValidatingWebhookConfiguration'],
  ['certificates.k8s.io/v1/CertificateSigningRequest', 'k8s.io.api.certificates.v1.CertificateSigningRequest'],
  ...['Role', 'ClusterRole', 'RoleBinding', 'ClusterRoleBinding'].map((k): [string, string] => [`rbac.authorization.k8s.io/v1/${k}`, `k8s.io.api.rbac.v1.${k}`]),
  ...['SelfSubjectAccessReview', 'SubjectAccessReview', 'LocalSubjectAccessReview', 'SelfSubjectRulesReview'].map((k): [string, string] => [
    `authorization.k8s.io/v1/${k}`,
    `k8s.io.api.authorization.v1.${k}`,
  ]),
]);

/**
 * Fully qualified message name for `apiVersion` + `kind`, or undefined when Plinth cannot decode that
 * kind from protobuf. DeleteOptions is accepted in every version, as upstream registers it in each
 * group version. Pure.
 */
export function protobufMessageFor(apiVersion: string, kind: string): string | undefined {
  if (kind === 'DeleteOptions') return 'k8s.io.apimachinery.pkg.apis.meta.v1.DeleteOptions';
  return KIND_MESSAGES.get(`${apiVersion}/${kind}`);
}

let cachedRoot: protobuf.Root | undefined;

/**
 * The resolved protobufjs Root holding every transcribed message (names kept as in the .proto files),
 * built once and cached. Throws only if the transcription itself is broken (a programming error).
 */
export function k8sProtoRoot(): protobuf.Root {
  if (cachedRoot) return cachedRoot;
  const root = new protobuf.Root();
  for (const source of [RUNTIME, META_V1, RESOURCE, CORE_V1, AUTOSCALING_V1, ADMISSIONREGISTRATION_V1, AUTHENTICATION_V1, RBAC_V1, AUTHORIZATION_V1, CERTIFICATES_V1]) {
    protobuf.parse(source, root, { keepCase: true });
  }
  root.resolveAll();
  cachedRoot = root;
  return root;
}
