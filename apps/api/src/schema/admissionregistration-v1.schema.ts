import { objectMetaProperty, refTo, typeMetaProperties } from './object-meta.schema.js';
import type { StructuralSchema } from '@plinth/apimachinery';

/** OpenAPI definition names of the admissionregistration.k8s.io/v1 types defined here. */
export const ADMISSIONREGISTRATION_V1_NAMES = {
  mutatingWebhookConfiguration: 'io.k8s.api.admissionregistration.v1.MutatingWebhookConfiguration',
  mutatingWebhookConfigurationList: 'io.k8s.api.admissionregistration.v1.MutatingWebhookConfigurationList',
  validatingWebhookConfiguration: 'io.k8s.api.admissionregistration.v1.ValidatingWebhookConfiguration',
  validatingWebhookConfigurationList: 'io.k8s.api.admissionregistration.v1.ValidatingWebhookConfigurationList',
  mutatingWebhook: 'io.k8s.api.admissionregistration.v1.MutatingWebhook',
  validatingWebhook: 'io.k8s.api.admissionregistration.v1.ValidatingWebhook',
  ruleWithOperations: 'io.k8s.api.admissionregistration.v1.RuleWithOperations',
  webhookClientConfig: 'io.k8s.api.admissionregistration.v1.WebhookClientConfig',
  serviceReference: 'io.k8s.api.admissionregistration.v1.ServiceReference',
  matchCondition: 'io.k8s.api.admissionregistration.v1.MatchCondition',
  labelSelector: 'io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector',
  labelSelectorRequirement: 'io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelectorRequirement',
} as const;

const N = ADMISSIONREGISTRATION_V1_NAMES;

const atomicStrings = (description: string): StructuralSchema => ({
  type: 'array',
  description,
  items: { type: 'string', default: '' },
  'x-kubernetes-list-type': 'atomic',
});

/** metav1.LabelSelectorRequirement. */
export const labelSelectorRequirementSchema: StructuralSchema = {
  type: 'object',
  description: 'A label selector requirement is a selector that contains values, a key, and an operator that relates the key and values.',
  required: ['key', 'operator'],
  properties: {
    key: { type: 'string', description: 'key is the label key that the selector applies to.' },
    operator: {
      type: 'string',
      description: "operator represents a key's relationship to a set of values. Valid operators are In, NotIn, Exists and DoesNotExist.",
    },
    values: atomicStrings(
      'values is an array of string values. If the operator is In or NotIn, the values array must be non-empty. If the operator is Exists or DoesNotExist, the values array must be empty. This array is replaced during a strategic merge patch.',
    ),
  },
};

/** metav1.LabelSelector. */
export const labelSelectorSchema: StructuralSchema = {
  type: 'object',
  description:
    'A label selector is a label query over a set of resources. The result of matchLabels and matchExpressions are ANDed. An empty label selector matches all objects. A null label selector matches no objects.',
  properties: {
    matchExpressions: {
      type: 'array',
      description: 'matchExpressions is a list of label selector requirements. The requirements are ANDed.',
      items: refTo(N.labelSelectorRequirement, labelSelectorRequirementSchema),
      'x-kubernetes-list-type': 'atomic',
    },
    matchLabels: {
      type: 'object',
      description:
        'matchLabels is a map of {key,value} pairs. A single {key,value} in the matchLabels map is equivalent to an element of matchExpressions, whose key field is "key", the operator is "In", and the values array contains only "value". The requirements are ANDed.',
      additionalProperties: { type: 'string', default: '' },
    },
  },
  'x-kubernetes-map-type': 'atomic',
};

/** admissionregistration/v1 ServiceReference. */
export const serviceReferenceSchema: StructuralSchema = {
  type: 'object',
  description: 'ServiceReference holds a reference to Service.legacy.k8s.io',
  required: ['namespace', 'name'],
  properties: {
    name: { type: 'string', description: '`name` is the name of the service. Required', default: '' },
    namespace: { type: 'string', description: '`namespace` is the namespace of the service. Required', default: '' },
    path: { type: 'string', description: '`path` is an optional URL path which will be sent in any request to this service.' },
    port: {
      type: 'integer',
      format: 'int32',
      description:
        'If specified, the port on the service that hosting webhook. Default to 443 for backward compatibility. `port` should be a valid port number (1-65535, inclusive).',
    },
  },
};

/** admissionregistration/v1 WebhookClientConfig. */
export const webhookClientConfigSchema: StructuralSchema = {
  type: 'object',
  description: 'WebhookClientConfig contains the information to make a TLS connection with the webhook',
  properties: {
    caBundle: {
      type: 'string',
      format: 'byte',
      description:
        "`caBundle` is a PEM encoded CA bundle which will be used to validate the webhook's server certificate. If unspecified, system trust roots on the apiserver are used.",
    },
    service: refTo(
      N.serviceReference,
      serviceReferenceSchema,
      '`service` is a reference to the service for this webhook. Either `service` or `url` must be specified.\n\nIf the webhook is running within the cluster, then you should use `service`.',
    ),
    url: {
      type: 'string',
      description:
        '`url` gives the location of the webhook, in standard URL form (`scheme://host:port/path`). Exactly one of `url` or `service` must be specified.\n\nThe `host` should not refer to a service running in the cluster; use the `service` field instead. The host might be resolved via external DNS in some apiservers (e.g., `kube-apiserver` cannot resolve in-cluster DNS as that would be a layering violation). `host` may also be an IP address.\n\nPlease note that using `localhost` or `127.0.0.1` as a `host` is risky unless you take great care to run this webhook on all hosts which run an apiserver which might need to make calls to this webhook. Such installs are likely to be non-portable, i.e., not easy to turn up in a new cluster.\n\nThe scheme must be "https"; the URL must begin with "https://".\n\nA path is optional, and if present may be any string permissible in a URL. You may use the path to pass an arbitrary string to the webhook, for example, a cluster identifier.\n\nAttempting to use a user or basic auth e.g. "user:password@" is not allowed. Fragments ("#...") and query parameters ("?...") are not allowed, either.',
    },
  },
};

/** admissionregistration/v1 RuleWithOperations. */
export const ruleWithOperationsSchema: StructuralSchema = {
  type: 'object',
  description: 'RuleWithOperations is a tuple of Operations and Resources. It is recommended to make sure that all the tuple expansions are valid.',
  properties: {
    apiGroups: atomicStrings("APIGroups is the API groups the resources belong to. '*' is all groups. If '*' is present, the length of the slice must be one. Required."),
    apiVersions: atomicStrings(
      "APIVersions is the API versions the resources belong to. '*' is all versions. If '*' is present, the length of the slice must be one. Required.",
    ),
    operations: atomicStrings(
      "Operations is the operations the admission hook cares about - CREATE, UPDATE, DELETE, CONNECT or * for all of those operations and any future admission operations that are added. If '*' is present, the length of the slice must be one. Required.",
    ),
    resources: atomicStrings(
      "Resources is a list of resources this rule applies to.\n\nFor example: 'pods' means pods. 'pods/log' means the log subresource of pods. '*' means all resources, but not subresources. 'pods/*' means all subresources of pods. '*/scale' means all scale subresources. '*/*' means all resources and their subresources.\n\nIf wildcard is present, the validation rule will ensure resources do not overlap with each other.\n\nDepending on the enclosing object, subresources might not be allowed. Required.",
    ),
    scope: {
      type: 'string',
      description:
        'scope specifies the scope of this rule. Valid values are "Cluster", "Namespaced", and "*" "Cluster" means that only cluster-scoped resources will match this rule. Namespace API objects are cluster-scoped. "Namespaced" means that only namespaced resources will match this rule. "*" means that there are no scope restrictions. Subresources match the scope of their parent resource. Default is "*".',
    },
  },
};

/** admissionregistration/v1 MatchCondition. */
export const matchConditionSchema: StructuralSchema = {
  type: 'object',
  description: 'MatchCondition represents a condition which must by fulfilled for a request to be sent to a webhook.',
  required: ['name', 'expression'],
  properties: {
    expression: {
      type: 'string',
      default: '',
      description:
        "Expression represents the expression which will be evaluated by CEL. Must evaluate to bool. CEL expressions have access to the contents of the AdmissionRequest and Authorizer, organized into CEL variables:\n\n'object' - The object from the incoming request. The value is null for DELETE requests. 'oldObject' - The existing object. The value is null for CREATE requests. 'request' - Attributes of the admission request(/pkg/apis/admission/types.go#AdmissionRequest). 'authorizer' - A CEL Authorizer. May be used to perform authorization checks for the principal (user or service account) of the request.\n  See https://pkg.go.dev/k8s.io/apiserver/pkg/cel/library#Authz\n'authorizer.requestResource' - A CEL ResourceCheck constructed from the 'authorizer' and configured with the\n  request resource.\nDocumentation on CEL: https://kubernetes.io/docs/reference/using-api/cel/\n\nRequired.",
    },
    name: {
      type: 'string',
      default: '',
      description:
        "Name is an identifier for this match condition, used for strategic merging of MatchConditions, as well as providing an identifier for logging purposes. A good name should be descriptive of the associated expression. Name must be a qualified name consisting of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')\n\nRequired.",
    },
  },
};

const WEBHOOK_DOCS = {
  admissionReviewVersions:
    'AdmissionReviewVersions is an ordered list of preferred `AdmissionReview` versions the Webhook expects. API server will try to use first version in the list which it supports. If none of the versions specified in this list supported by API server, validation will fail for this object. If a persisted webhook configuration specifies allowed versions and does not include any versions known to the API Server, calls to the webhook will fail and be subject to the failure policy.',
  clientConfig: 'ClientConfig defines how to communicate with the hook. Required',
  failurePolicy: 'FailurePolicy defines how unrecognized errors from the admission endpoint are handled - allowed values are Ignore or Fail. Defaults to Fail.',
  matchConditions:
    'MatchConditions is a list of conditions that must be met for a request to be sent to this webhook. Match conditions filter requests that have already been matched by the rules, namespaceSelector, and objectSelector. An empty list of matchConditions matches all requests. There are a maximum of 64 match conditions allowed.\n\nThe exact matching logic is (in order):\n  1. If ANY matchCondition evaluates to FALSE, the webhook is skipped.\n  2. If ALL matchConditions evaluate to TRUE, the webhook is called.\n  3. If any matchCondition evaluates to an error (but none are FALSE):\n     - If failurePolicy=Fail, reject the request\n     - If failurePolicy=Ignore, the error is ignored and the webhook is skipped',
  matchPolicy:
    'matchPolicy defines how the "rules" list is used to match incoming requests. Allowed values are "Exact" or "Equivalent".\n\n- Exact: match a request only if it exactly matches a specified rule. For example, if deployments can be modified via apps/v1, apps/v1beta1, and extensions/v1beta1, but "rules" only included `apiGroups:["apps"], apiVersions:["v1"], resources: ["deployments"]`, a request to apps/v1beta1 or extensions/v1beta1 would not be sent to the webhook.\n\n- Equivalent: match a request if modifies a resource listed in rules, even via another API group or version. For example, if deployments can be modified via apps/v1, apps/v1beta1, and extensions/v1beta1, and "rules" only included `apiGroups:["apps"], apiVersions:["v1"], resources: ["deployments"]`, a request to apps/v1beta1 or extensions/v1beta1 would be converted to apps/v1 and sent to the webhook.\n\nDefaults to "Equivalent"',
  name: 'The name of the admission webhook. Name should be fully qualified, e.g., imagepolicy.kubernetes.io, where "imagepolicy" is the name of the webhook, and kubernetes.io is the name of the organization. Required.',
  namespaceSelector:
    'NamespaceSelector decides whether to run the webhook on an object based on whether the namespace for that object matches the selector. If the object itself is a namespace, the matching is performed on object.metadata.labels. If the object is another cluster scoped resource, it never skips the webhook.\n\nFor example, to run the webhook on any objects whose namespace is not associated with "runlevel" of "0" or "1";  you will set the selector as follows: "namespaceSelector": {\n  "matchExpressions": [\n    {\n      "key": "runlevel",\n      "operator": "NotIn",\n      "values": [\n        "0",\n        "1"\n      ]\n    }\n  ]\n}\n\nIf instead you want to only run the webhook on any objects whose namespace is associated with the "environment" of "prod" or "staging"; you will set the selector as follows: "namespaceSelector": {\n  "matchExpressions": [\n    {\n      "key": "environment",\n      "operator": "In",\n      "values": [\n        "prod",\n        "staging"\n      ]\n    }\n  ]\n}\n\nSee https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/ for more examples of label selectors.\n\nDefault to the empty LabelSelector, which matches everything.',
  objectSelector:
    'ObjectSelector decides whether to run the webhook based on if the object has matching labels. objectSelector is evaluated against both the oldObject and newObject that would be sent to the webhook, and is considered to match if either object matches the selector. A null object (oldObject in the case of create, or newObject in the case of delete) or an object that cannot have labels (like a DeploymentRollback or a PodProxyOptions object) is not considered to match. Use the object selector only if the webhook is opt-in, because end users may skip the admission webhook by setting the labels. Default to the empty LabelSelector, which matches everything.',
  rules:
    'Rules describes what operations on what resources/subresources the webhook cares about. The webhook cares about an operation if it matches _any_ Rule. However, in order to prevent ValidatingAdmissionWebhooks and MutatingAdmissionWebhooks from putting the cluster in a state which cannot be recovered from without completely disabling the plugin, ValidatingAdmissionWebhooks and MutatingAdmissionWebhooks are never called on admission requests for ValidatingWebhookConfiguration and MutatingWebhookConfiguration objects.',
  sideEffects:
    'SideEffects states whether this webhook has side effects. Acceptable values are: None, NoneOnDryRun (webhooks created via v1beta1 may also specify Some or Unknown). Webhooks with side effects MUST implement a reconciliation system, since a request may be rejected by a future step in the admission chain and the side effects therefore need to be undone. Requests with the dryRun attribute will be auto-rejected if they match a webhook with sideEffects == Unknown or Some.',
  timeoutSeconds:
    'TimeoutSeconds specifies the timeout for this webhook. After the timeout passes, the webhook call will be ignored or the API call will fail based on the failure policy. The timeout value must be between 1 and 30 seconds. Default to 10 seconds.',
  reinvocationPolicy:
    'reinvocationPolicy indicates whether this webhook should be called multiple times as part of a single admission evaluation. Allowed values are "Never" and "IfNeeded".\n\nNever: the webhook will not be called more than once in a single admission evaluation.\n\nIfNeeded: the webhook will be called at least one additional time as part of the admission evaluation if the object being admitted is modified by other admission plugins after the initial webhook call. Webhooks that specify this option *must* be idempotent, able to process objects they previously admitted. Note: * the number of additional invocations is not guaranteed to be exactly one. * if additional invocations result in further modifications to the object, webhooks are not guaranteed to be invoked again. * webhooks that use this option may be reordered to minimize the number of additional invocations. * to validate an object after all mutations are guaranteed complete, use a validating admission webhook instead.\n\nDefaults to "Never".',
} as const;

function webhookProperties(): Record<string, StructuralSchema> {
  return {
    admissionReviewVersions: atomicStrings(WEBHOOK_DOCS.admissionReviewVersions),
    clientConfig: refTo(N.webhookClientConfig, webhookClientConfigSchema, WEBHOOK_DOCS.clientConfig),
    failurePolicy: { type: 'string', description: WEBHOOK_DOCS.failurePolicy },
    matchConditions: {
      type: 'array',
      description: WEBHOOK_DOCS.matchConditions,
      items: refTo(N.matchCondition, matchConditionSchema),
      'x-kubernetes-list-map-keys': ['name'],
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-patch-merge-key': 'name',
      'x-kubernetes-patch-strategy': 'merge',
    },
    matchPolicy: { type: 'string', description: WEBHOOK_DOCS.matchPolicy },
    name: { type: 'string', description: WEBHOOK_DOCS.name, default: '' },
    namespaceSelector: refTo(N.labelSelector, labelSelectorSchema, WEBHOOK_DOCS.namespaceSelector),
    objectSelector: refTo(N.labelSelector, labelSelectorSchema, WEBHOOK_DOCS.objectSelector),
    rules: {
      type: 'array',
      description: WEBHOOK_DOCS.rules,
      items: refTo(N.ruleWithOperations, ruleWithOperationsSchema),
      'x-kubernetes-list-type': 'atomic',
    },
    sideEffects: { type: 'string', description: WEBHOOK_DOCS.sideEffects },
    timeoutSeconds: { type: 'integer', format: 'int32', description: WEBHOOK_DOCS.timeoutSeconds },
  };
}

const WEBHOOK_REQUIRED = ['name', 'clientConfig', 'sideEffects', 'admissionReviewVersions'];

/** admissionregistration/v1 MutatingWebhook. */
export const mutatingWebhookSchema: StructuralSchema = {
  type: 'object',
  description: 'MutatingWebhook describes an admission webhook and the resources and operations it applies to.',
  required: WEBHOOK_REQUIRED,
  properties: { ...webhookProperties(), reinvocationPolicy: { type: 'string', description: WEBHOOK_DOCS.reinvocationPolicy } },
};

/** admissionregistration/v1 ValidatingWebhook. */
export const validatingWebhookSchema: StructuralSchema = {
  type: 'object',
  description: 'ValidatingWebhook describes an admission webhook and the resources and operations it applies to.',
  required: WEBHOOK_REQUIRED,
  properties: webhookProperties(),
};

const CONFIG_METADATA = 'Standard object metadata; More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata.';

function webhooksProperty(itemName: string, item: StructuralSchema): StructuralSchema {
  return {
    type: 'array',
    description: 'Webhooks is a list of webhooks and the affected resources and operations.',
    items: refTo(itemName, item),
    'x-kubernetes-list-map-keys': ['name'],
    'x-kubernetes-list-type': 'map',
    'x-kubernetes-patch-merge-key': 'name',
    'x-kubernetes-patch-strategy': 'merge',
  };
}

/** admissionregistration/v1 MutatingWebhookConfiguration. */
export const mutatingWebhookConfigurationSchema: StructuralSchema = {
  type: 'object',
  description: 'MutatingWebhookConfiguration describes the configuration of and admission webhook that accept or reject and may change the object.',
  properties: {
    ...typeMetaProperties(),
    metadata: objectMetaProperty(CONFIG_METADATA),
    webhooks: webhooksProperty(N.mutatingWebhook, mutatingWebhookSchema),
  },
};

/** admissionregistration/v1 ValidatingWebhookConfiguration. */
export const validatingWebhookConfigurationSchema: StructuralSchema = {
  type: 'object',
  description: 'ValidatingWebhookConfiguration describes the configuration of and admission webhook that accept or reject and object without changing it.',
  properties: {
    ...typeMetaProperties(),
    metadata: objectMetaProperty(CONFIG_METADATA),
    webhooks: webhooksProperty(N.validatingWebhook, validatingWebhookSchema),
  },
};
