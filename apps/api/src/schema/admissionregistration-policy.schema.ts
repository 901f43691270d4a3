import { labelSelectorSchema, ruleWithOperationsSchema } from './admissionregistration-v1.schema.js';
import { objectMetaProperty, refTo, typeMetaProperties } from './object-meta.schema.js';
import type { StructuralSchema } from '@plinth/apimachinery';

/**
 * Schemas of the admission policy kinds: ValidatingAdmissionPolicy and
 * ValidatingAdmissionPolicyBinding (admissionregistration.k8s.io/v1),
 * MutatingAdmissionPolicy and MutatingAdmissionPolicyBinding (v1alpha1).
 * Shared parts are built per version, as upstream publishes one
 * definition per Go package version.
 */

const LABEL_SELECTOR = 'io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector';

/** metav1.Condition. */
const conditionSchema: StructuralSchema = {
  type: 'object',
  description: 'Condition contains details for one aspect of the current state of this API Resource.',
  required: ['type', 'status', 'lastTransitionTime', 'reason', 'message'],
  properties: {
    lastTransitionTime: { type: 'string', format: 'date-time', description: 'lastTransitionTime is the last time the condition transitioned from one status to another.' },
    message: { type: 'string', description: 'message is a human readable message indicating details about the transition.', default: '' },
    observedGeneration: { type: 'integer', format: 'int64', description: 'observedGeneration represents the .metadata.generation that the condition was set based upon.' },
    reason: { type: 'string', description: "reason contains a programmatic identifier indicating the reason for the condition's last transition.", default: '' },
    status: { type: 'string', description: 'status of the condition, one of True, False, Unknown.', default: '' },
    type: { type: 'string', description: 'type of condition in CamelCase or in foo.example.com/CamelCase.', default: '' },
  },
};

const strings = (description: string): StructuralSchema => ({
  type: 'array',
  description,
  items: { type: 'string', default: '' },
  'x-kubernetes-list-type': 'atomic',
});

const str = (description: string, withDefault = false): StructuralSchema =>
  withDefault ? { type: 'string', description, default: '' } : { type: 'string', description };

function mapList(description: string, name: string, item: StructuralSchema, key = 'name'): StructuralSchema {
  return { type: 'array', description, items: refTo(name, item), 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': [key] };
}

function atomicList(description: string, name: string, item: StructuralSchema): StructuralSchema {
  return { type: 'array', description, items: refTo(name, item), 'x-kubernetes-list-type': 'atomic' };
}

/** Every schema of one version (`v1` or `v1alpha1`), keyed by type name. */
function sharedSchemas(version: string) {
  const n = (t: string) => `io.k8s.api.admissionregistration.${version}.${t}`;
  const namedRule: StructuralSchema = {
    type: 'object',
    description: 'NamedRuleWithOperations is a tuple of Operations and Resources with ResourceNames.',
    properties: {
      ...ruleWithOperationsSchema.properties,
      resourceNames: strings('ResourceNames is an optional white list of names that the rule applies to.  An empty set means that everything is allowed.'),
    },
    'x-kubernetes-map-type': 'atomic',
  };
  const matchResources: StructuralSchema = {
    type: 'object',
    description:
      'MatchResources decides whether to run the admission control policy on an object based on whether it meets the match criteria. The exclude rules take precedence over include rules (if a resource matches both, it is excluded)',
    properties: {
      excludeResourceRules: atomicList(
        'ExcludeResourceRules describes what operations on what resources/subresources the policy should not care about. The exclude rules take precedence over include rules (if a resource matches both, it is excluded)',
        n('NamedRuleWithOperations'),
        namedRule,
      ),
      matchPolicy: str('matchPolicy defines how the "MatchResources" list is used to match incoming requests. Allowed values are "Exact" or "Equivalent". Defaults to "Equivalent"'),
      namespaceSelector: refTo(LABEL_SELECTOR, labelSelectorSchema, 'NamespaceSelector decides whether to run the admission control policy on an object based on whether the namespace for that object matches the selector. Default to the empty LabelSelector, which matches everything.'),
      objectSelector: refTo(LABEL_SELECTOR, labelSelectorSchema, 'ObjectSelector decides whether to run the validation based on if the object has matching labels. Default to the empty LabelSelector, which matches everything.'),
      resourceRules: atomicList(
        'ResourceRules describes what operations on what resources/subresources the admission policy matches. The policy cares about an operation if it matches _any_ Rule.',
        n('NamedRuleWithOperations'),
        namedRule,
      ),
    },
    'x-kubernetes-map-type': 'atomic',
  };
  const paramKind: StructuralSchema = {
    type: 'object',
    description: 'ParamKind is a tuple of Group Kind and Version.',
    properties: {
      apiVersion: str('APIVersion is the API group version the resources belong to. In format of "group/version". Required.'),
      kind: str('Kind is the API kind the resources belong to. Required.'),
    },
    'x-kubernetes-map-type': 'atomic',
  };
  const paramRef: StructuralSchema = {
    type: 'object',
    description: 'ParamRef describes how to locate the params to be used as input to expressions of rules applied by a policy binding.',
    properties: {
      name: str('name is the name of the resource being referenced. One of `name` or `selector` must be set, but `name` and `selector` are mutually exclusive properties.'),
      namespace: str('namespace is the namespace of the referenced resource. Allows limiting the search for params to a specific namespace. Applies to both `name` and `selector` fields.'),
      parameterNotFoundAction: str('`parameterNotFoundAction` controls the behavior of the binding when the resource exists, and name or selector is valid, but there are no parameters matched by the binding. Allowed values are `Allow` or `Deny`. Required'),
      selector: refTo(LABEL_SELECTOR, labelSelectorSchema, 'selector can be used to match multiple param objects based on their labels. Supply selector: {} to match all resources of the ParamKind.'),
    },
    'x-kubernetes-map-type': 'atomic',
  };
  const matchCondition: StructuralSchema = {
    type: 'object',
    description: 'MatchCondition represents a condition which must be fulfilled for a request to be sent to a webhook.',
    required: ['name', 'expression'],
    properties: {
      expression: str("Expression represents the expression which will be evaluated by CEL. Must evaluate to bool. Variables: 'object', 'oldObject', 'request', 'params', 'namespaceObject', 'variables'. Required.", true),
      name: str('Name is an identifier for this match condition, used for strategic merging of MatchConditions, as well as providing an identifier for logging purposes. Required.', true),
    },
  };
  const variable: StructuralSchema = {
    type: 'object',
    description: 'Variable is the definition of a variable that is used for composition. A variable is defined as a named expression.',
    required: ['name', 'expression'],
    properties: {
      expression: str('Expression is the expression that will be evaluated as the value of the variable. The CEL expression has access to the same identifiers as the CEL expressions in Validation.', true),
      name: str('Name is the name of the variable. The name must be a valid CEL identifier and unique among all variables. The variable can be accessed in other expressions through `variables` For example, if name is "foo", the variable will be available as `variables.foo`', true),
    },
    'x-kubernetes-map-type': 'atomic',
  };
  return { n, matchResources, paramKind, paramRef, matchCondition, variable };
}

const V1 = sharedSchemas('v1');
const ALPHA = sharedSchemas('v1alpha1');

const POLICY_METADATA = 'Standard object metadata; More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata.';

const validation: StructuralSchema = {
  type: 'object',
  description: 'Validation specifies the CEL expression which is used to apply the validation.',
  required: ['expression'],
  properties: {
    expression: str("Expression represents the expression which will be evaluated by CEL. ref: https://github.com/google/cel-spec CEL expressions have access to the contents of the API request/response, organized into CEL variables as well as some other useful variables: 'object', 'oldObject', 'request', 'params', 'namespaceObject', 'variables'. Required.", true),
    message: str('Message represents the message displayed when validation fails. The message is required if the Expression contains line breaks. The message must not contain line breaks. If unset, the message is "failed rule: {Rule}".'),
    messageExpression: str('messageExpression declares a CEL expression that evaluates to the validation failure message that is returned when this rule fails. Since messageExpression is used as a failure message, it must evaluate to a string. If both message and messageExpression are present on a validation, then messageExpression will be used if validation fails.'),
    reason: str('Reason represents a machine-readable description of why this validation failed. Supported values: "Unauthorized", "Forbidden", "Invalid", "RequestEntityTooLarge". If not set, StatusReasonInvalid is used in the response to the client.'),
  },
};

const auditAnnotation: StructuralSchema = {
  type: 'object',
  description: 'AuditAnnotation describes how to produce an audit annotation for an API request.',
  required: ['key', 'valueExpression'],
  properties: {
    key: str('key specifies the audit annotation key. The audit annotation keys of a ValidatingAdmissionPolicy must be unique. The key must be a qualified name ([A-Za-z0-9][-A-Za-z0-9_.]*) no more than 63 bytes in length. Required.', true),
    valueExpression: str('valueExpression represents the expression which is evaluated by CEL to produce an audit annotation value. The expression must evaluate to either a string or null value. Required.', true),
  },
};

const typeChecking: StructuralSchema = {
  type: 'object',
  description: 'TypeChecking contains results of type checking the expressions in the ValidatingAdmissionPolicy',
  properties: {
    expressionWarnings: atomicList('The type checking warnings for each expression.', V1.n('ExpressionWarning'), {
      type: 'object',
      description: 'ExpressionWarning is a warning information that targets a specific expression.',
      required: ['fieldRef', 'warning'],
      properties: {
        fieldRef: str('The path to the field that refers the expression. For example, the reference to the expression of the first item of validations is "spec.validations[0].expression"', true),
        warning: str('The content of type checking information in a human-readable form. Each line of the warning contains the type that the expression is checked against, followed by the type check error from the compiler.', true),
      },
    }),
  },
};

/** admissionregistration/v1 ValidatingAdmissionPolicy. */
export const validatingAdmissionPolicySchema: StructuralSchema = {
  type: 'object',
  description: 'ValidatingAdmissionPolicy describes the definition of an admission validation policy that accepts or rejects an object without changing it.',
  properties: {
    ...typeMetaProperties(),
    metadata: objectMetaProperty(POLICY_METADATA),
    spec: refTo(V1.n('ValidatingAdmissionPolicySpec'), {
      type: 'object',
      description: 'ValidatingAdmissionPolicySpec is the specification of the desired behavior of the AdmissionPolicy.',
      properties: {
        auditAnnotations: atomicList('auditAnnotations contains CEL expressions which are used to produce audit annotations for the audit event of the API request.', V1.n('AuditAnnotation'), auditAnnotation),
        failurePolicy: str('failurePolicy defines how to handle failures for the admission policy. Allowed values are Ignore or Fail. Defaults to Fail.'),
        matchConditions: mapList('MatchConditions is a list of conditions that must be met for a request to be validated. An empty list of matchConditions matches all requests. There are a maximum of 64 match conditions allowed.', V1.n('MatchCondition'), V1.matchCondition),
        matchConstraints: refTo(V1.n('MatchResources'), V1.matchResources, 'MatchConstraints specifies what resources this policy is designed to validate. Required.'),
        paramKind: refTo(V1.n('ParamKind'), V1.paramKind, 'ParamKind specifies the kind of resources used to parameterize this policy. If absent, there are no parameters for this policy and the param CEL variable will not be provided to validation expressions.'),
        validations: atomicList('Validations contain CEL expressions which is used to apply the validation. Validations and AuditAnnotations may not both be empty; a minimum of one Validations or AuditAnnotations is required.', V1.n('Validation'), validation),
        variables: atomicList('Variables contain definitions of variables that can be used in composition of other expressions. Each variable is defined as a named CEL expression.', V1.n('Variable'), V1.variable),
      },
    }, 'Specification of the desired behavior of the ValidatingAdmissionPolicy.'),
    status: refTo(V1.n('ValidatingAdmissionPolicyStatus'), {
      type: 'object',
      description: 'ValidatingAdmissionPolicyStatus represents the status of an admission validation policy.',
      properties: {
        conditions: mapList("The conditions represent the latest available observations of a policy's current state.", 'io.k8s.apimachinery.pkg.apis.meta.v1.Condition', conditionSchema, 'type'),
        observedGeneration: { type: 'integer', format: 'int64', description: 'The generation observed by the controller.' },
        typeChecking: refTo(V1.n('TypeChecking'), typeChecking, 'The results of type checking for each expression. Presence of this field indicates the completion of the type checking.'),
      },
    }, 'The status of the ValidatingAdmissionPolicy, including warnings that are useful to determine if the policy behaves in the expected way. Populated by the system. Read-only.'),
  },
};

/** admissionregistration/v1 ValidatingAdmissionPolicyBinding. */
export const validatingAdmissionPolicyBindingSchema: StructuralSchema = {
  type: 'object',
  description: 'ValidatingAdmissionPolicyBinding binds the ValidatingAdmissionPolicy with paramerized resources. ValidatingAdmissionPolicyBinding and parameter CRDs together define how cluster administrators configure policies for clusters.',
  properties: {
    ...typeMetaProperties(),
    metadata: objectMetaProperty(POLICY_METADATA),
    spec: refTo(V1.n('ValidatingAdmissionPolicyBindingSpec'), {
      type: 'object',
      description: 'ValidatingAdmissionPolicyBindingSpec is the specification of the ValidatingAdmissionPolicyBinding.',
      properties: {
        matchResources: refTo(V1.n('MatchResources'), V1.matchResources, 'MatchResources declares what resources match this binding and will be validated by it. If this is unset, all resources matched by the policy are validated by this binding.'),
        paramRef: refTo(V1.n('ParamRef'), V1.paramRef, 'paramRef specifies the parameter resource used to configure the admission control policy.'),
        policyName: str('PolicyName references a ValidatingAdmissionPolicy name which the ValidatingAdmissionPolicyBinding binds to. If the referenced resource does not exist, this binding is considered invalid and will be ignored Required.'),
        validationActions: {
          type: 'array',
          description: 'validationActions declares how Validations of the referenced ValidatingAdmissionPolicy are enforced. Allowed values are Deny, Warn and Audit; Deny and Warn may not be used together. Required.',
          items: { type: 'string', default: '' },
          'x-kubernetes-list-type': 'set',
        },
      },
    }, 'Specification of the desired behavior of the ValidatingAdmissionPolicyBinding.'),
  },
};

const mutation: StructuralSchema = {
  type: 'object',
  description: 'Mutation specifies the CEL expression which is used to apply the Mutation.',
  required: ['patchType'],
  properties: {
    applyConfiguration: refTo(ALPHA.n('ApplyConfiguration'), {
      type: 'object',
      description: 'ApplyConfiguration defines the desired configuration values of an object.',
      properties: { expression: str('expression will be evaluated by CEL to create an apply configuration, e.g. Object{spec: Object.spec{replicas: 1}}.') },
    }, 'applyConfiguration defines the desired configuration values of an object. Required when patchType is ApplyConfiguration.'),
    jsonPatch: refTo(ALPHA.n('JSONPatch'), {
      type: 'object',
      description: 'JSONPatch defines a JSON Patch.',
      properties: { expression: str('expression will be evaluated by CEL to create a JSON patch, a list of JSONPatch{op, path, value, from} values.') },
    }, 'jsonPatch defines a JSON patch operation to perform a mutation to the object. Required when patchType is JSONPatch.'),
    patchType: str('patchType indicates the patch strategy used. Allowed values are "ApplyConfiguration" and "JSONPatch". Required.', true),
  },
};

/** admissionregistration/v1alpha1 MutatingAdmissionPolicy. */
export const mutatingAdmissionPolicySchema: StructuralSchema = {
  type: 'object',
  description: 'MutatingAdmissionPolicy describes the definition of an admission mutation policy that mutates the object coming into admission chain.',
  properties: {
    ...typeMetaProperties(),
    metadata: objectMetaProperty(POLICY_METADATA),
    spec: refTo(ALPHA.n('MutatingAdmissionPolicySpec'), {
      type: 'object',
      description: 'MutatingAdmissionPolicySpec is the specification of the desired behavior of the admission policy.',
      properties: {
        failurePolicy: str('failurePolicy defines how to handle failures for the admission policy. Allowed values are Ignore or Fail. Defaults to Fail.'),
        matchConditions: mapList('matchConditions is a list of conditions that must be met for a request to be validated.', ALPHA.n('MatchCondition'), ALPHA.matchCondition),
        matchConstraints: refTo(ALPHA.n('MatchResources'), ALPHA.matchResources, 'matchConstraints specifies what resources this policy is designed to evaluate. The CREATE, UPDATE and CONNECT operations are allowed. Required.'),
        mutations: atomicList('mutations contain operations to perform on matching objects. mutations may not be empty; a minimum of one mutation is required.', ALPHA.n('Mutation'), mutation),
        paramKind: refTo(ALPHA.n('ParamKind'), ALPHA.paramKind, 'paramKind specifies the kind of resources used to parameterize this policy.'),
        reinvocationPolicy: str('reinvocationPolicy indicates whether mutations may be called multiple times per MutatingAdmissionPolicyBinding as part of a single admission evaluation. Allowed values are "Never" and "IfNeeded".'),
        variables: atomicList('variables contain definitions of variables that can be used in composition of other expressions.', ALPHA.n('Variable'), ALPHA.variable),
      },
    }, 'Specification of the desired behavior of the MutatingAdmissionPolicy.'),
  },
};

/** admissionregistration/v1alpha1 MutatingAdmissionPolicyBinding. */
export const mutatingAdmissionPolicyBindingSchema: StructuralSchema = {
  type: 'object',
  description: 'MutatingAdmissionPolicyBinding binds the MutatingAdmissionPolicy with parametrized resources.',
  properties: {
    ...typeMetaProperties(),
    metadata: objectMetaProperty(POLICY_METADATA),
    spec: refTo(ALPHA.n('MutatingAdmissionPolicyBindingSpec'), {
      type: 'object',
      description: 'MutatingAdmissionPolicyBindingSpec is the specification of the MutatingAdmissionPolicyBinding.',
      properties: {
        matchResources: refTo(ALPHA.n('MatchResources'), ALPHA.matchResources, 'matchResources limits what resources match this binding and may be mutated by it.'),
        paramRef: refTo(ALPHA.n('ParamRef'), ALPHA.paramRef, 'paramRef specifies the parameter resource used to configure the admission control policy.'),
        policyName: str('policyName references a MutatingAdmissionPolicy name which the MutatingAdmissionPolicyBinding binds to. Required.'),
      },
    }, 'Specification of the desired behavior of the MutatingAdmissionPolicyBinding.'),
  },
};
