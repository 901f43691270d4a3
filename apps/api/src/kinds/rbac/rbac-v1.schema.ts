import { labelSelectorSchema } from '../../schema/admissionregistration-v1.schema.js';
import { objectMetaProperty, refTo, typeMetaProperties } from '../../schema/object-meta.schema.js';
import type { StructuralSchema } from '@plinth/apimachinery';

/** OpenAPI definition names of the rbac.authorization.k8s.io/v1 types. */
export const RBAC_V1_NAMES = {
  policyRule: 'io.k8s.api.rbac.v1.PolicyRule',
  subject: 'io.k8s.api.rbac.v1.Subject',
  roleRef: 'io.k8s.api.rbac.v1.RoleRef',
  aggregationRule: 'io.k8s.api.rbac.v1.AggregationRule',
  labelSelector: 'io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector',
} as const;

const N = RBAC_V1_NAMES;

const atomic = (description: string): StructuralSchema => ({
  type: 'array',
  description,
  items: { type: 'string', default: '' },
  'x-kubernetes-list-type': 'atomic',
});

/** rbac/v1 PolicyRule. */
export const policyRuleSchema: StructuralSchema = {
  type: 'object',
  description:
    'PolicyRule holds information that describes a policy rule, but does not contain information about who the rule applies to or which namespace the rule applies to.',
  required: ['verbs'],
  properties: {
    apiGroups: atomic(
      'APIGroups is the name of the APIGroup that contains the resources.  If multiple API groups are specified, any action requested against one of the enumerated resources in any API group will be allowed. "" represents the core API group and "*" represents all API groups.',
    ),
    nonResourceURLs: atomic(
      'NonResourceURLs is a set of partial urls that a user should have access to.  *s are allowed, but only as the full, final step in the path Since non-resource URLs are not namespaced, this field is only applicable for ClusterRoles referenced from a ClusterRoleBinding. Rules can either apply to API resources (such as "pods" or "secrets") or non-resource URL paths (such as "/api"),  but not both.',
    ),
    resourceNames: atomic('ResourceNames is an optional white list of names that the rule applies to.  An empty set means that everything is allowed.'),
    resources: atomic("Resources is a list of resources this rule applies to. '*' represents all resources."),
    verbs: atomic("Verbs is a list of Verbs that apply to ALL the ResourceKinds contained in this rule. '*' represents all verbs."),
  },
};

/** rbac/v1 Subject. */
export const subjectSchema: StructuralSchema = {
  type: 'object',
  description:
    'Subject contains a reference to the object or user identities a role binding applies to.  This can either hold a direct API object reference, or a value for non-objects such as user and group names.',
  required: ['kind', 'name'],
  properties: {
    apiGroup: {
      type: 'string',
      description:
        'APIGroup holds the API group of the referenced subject. Defaults to "" for ServiceAccount subjects. Defaults to "rbac.authorization.k8s.io" for User and Group subjects.',
    },
    kind: {
      type: 'string',
      default: '',
      description:
        'Kind of object being referenced. Values defined by this API group are "User", "Group", and "ServiceAccount". If the Authorizer does not recognized the kind value, the Authorizer should report an error.',
    },
    name: { type: 'string', default: '', description: 'Name of the object being referenced.' },
    namespace: {
      type: 'string',
      description:
        'Namespace of the referenced object.  If the object kind is non-namespace, such as "User" or "Group", and this value is not empty the Authorizer should report an error.',
    },
  },
  'x-kubernetes-map-type': 'atomic',
};

/** rbac/v1 RoleRef. */
export const roleRefSchema: StructuralSchema = {
  type: 'object',
  description: 'RoleRef contains information that points to the role being used',
  required: ['apiGroup', 'kind', 'name'],
  properties: {
    apiGroup: { type: 'string', default: '', description: 'APIGroup is the group for the resource being referenced' },
    kind: { type: 'string', default: '', description: 'Kind is the type of resource being referenced' },
    name: { type: 'string', default: '', description: 'Name is the name of resource being referenced' },
  },
  'x-kubernetes-map-type': 'atomic',
};

/** rbac/v1 AggregationRule. */
export const aggregationRuleSchema: StructuralSchema = {
  type: 'object',
  description: 'AggregationRule describes how to locate ClusterRoles to aggregate into the ClusterRole',
  properties: {
    clusterRoleSelectors: {
      type: 'array',
      description:
        "ClusterRoleSelectors holds a list of selectors which will be used to find ClusterRoles and create the rules. If any of the selectors match, then the ClusterRole's permissions will be added",
      items: refTo(N.labelSelector, labelSelectorSchema),
      'x-kubernetes-list-type': 'atomic',
    },
  },
};

const rulesProperty = (description: string): StructuralSchema => ({
  type: 'array',
  description,
  items: refTo(N.policyRule, policyRuleSchema),
  'x-kubernetes-list-type': 'atomic',
});

const subjectsProperty: StructuralSchema = {
  type: 'array',
  description: 'Subjects holds references to the objects the role applies to.',
  items: refTo(N.subject, subjectSchema),
  'x-kubernetes-list-type': 'atomic',
};

/** rbac/v1 Role. */
export const roleSchema: StructuralSchema = {
  type: 'object',
  description: 'Role is a namespaced, logical grouping of PolicyRules that can be referenced as a unit by a RoleBinding.',
  properties: {
    ...typeMetaProperties(),
    metadata: objectMetaProperty('Standard object\'s metadata.'),
    rules: rulesProperty('Rules holds all the PolicyRules for this Role'),
  },
};

/** rbac/v1 ClusterRole. */
export const clusterRoleSchema: StructuralSchema = {
  type: 'object',
  description: 'ClusterRole is a cluster level, logical grouping of PolicyRules that can be referenced as a unit by a RoleBinding or ClusterRoleBinding.',
  properties: {
    ...typeMetaProperties(),
    aggregationRule: refTo(
      N.aggregationRule,
      aggregationRuleSchema,
      'AggregationRule is an optional field that describes how to build the Rules for this ClusterRole. If AggregationRule is set, then the Rules are controller managed and direct changes to Rules will be stomped by the controller.',
    ),
    metadata: objectMetaProperty('Standard object\'s metadata.'),
    rules: rulesProperty('Rules holds all the PolicyRules for this ClusterRole'),
  },
};

/** rbac/v1 RoleBinding. */
export const roleBindingSchema: StructuralSchema = {
  type: 'object',
  description:
    'RoleBinding references a role, but does not contain it.  It can reference a Role in the same namespace or a ClusterRole in the global namespace. It adds who information via Subjects and namespace information by which namespace it exists in.  RoleBindings in a given namespace only have effect in that namespace.',
  required: ['roleRef'],
  properties: {
    ...typeMetaProperties(),
    metadata: objectMetaProperty('Standard object\'s metadata.'),
    roleRef: refTo(
      N.roleRef,
      roleRefSchema,
      'RoleRef can reference a Role in the current namespace or a ClusterRole in the global namespace. If the RoleRef cannot be resolved, the Authorizer must return an error. This field is immutable.',
    ),
    subjects: subjectsProperty,
  },
};

/** rbac/v1 ClusterRoleBinding. */
export const clusterRoleBindingSchema: StructuralSchema = {
  type: 'object',
  description: 'ClusterRoleBinding references a ClusterRole, but not contain it.  It can reference a ClusterRole in the global namespace, and adds who information via Subject.',
  required: ['roleRef'],
  properties: {
    ...typeMetaProperties(),
    metadata: objectMetaProperty('Standard object\'s metadata.'),
    roleRef: refTo(
      N.roleRef,
      roleRefSchema,
      'RoleRef can only reference a ClusterRole in the global namespace. If the RoleRef cannot be resolved, the Authorizer must return an error. This field is immutable.',
    ),
    subjects: subjectsProperty,
  },
};
