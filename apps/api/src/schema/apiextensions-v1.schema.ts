import { objectMetaProperty, refTo, timeSchema, typeMetaProperties } from './object-meta.schema.js';
import type { StructuralSchema } from '@plinth/apimachinery';

/** OpenAPI definition names of apiextensions.k8s.io/v1. */
export const APIEXTENSIONS_V1_NAMES = {
  crd: 'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition',
  spec: 'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionSpec',
  status: 'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionStatus',
  names: 'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionNames',
  version: 'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionVersion',
  condition: 'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionCondition',
  conversion: 'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceConversion',
  validation: 'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceValidation',
  subresources: 'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceSubresources',
  scale: 'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceSubresourceScale',
  statusSub: 'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceSubresourceStatus',
  column: 'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceColumnDefinition',
  selectableField: 'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.SelectableField',
  props: 'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps',
  propsOrBool: 'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrBool',
  propsOrArray: 'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrArray',
  json: 'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSON',
  rule: 'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.ValidationRule',
  externalDocs: 'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.ExternalDocumentation',
  webhookConversion: 'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.WebhookConversion',
  webhookClientConfig: 'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.WebhookClientConfig',
  serviceReference: 'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.ServiceReference',
} as const;

const str = (description?: string): StructuralSchema => (description ? { type: 'string', description } : { type: 'string' });
const bool = (description?: string): StructuralSchema => (description ? { type: 'boolean', description } : { type: 'boolean' });
const int64: StructuralSchema = { type: 'integer', format: 'int64' };
const double: StructuralSchema = { type: 'number', format: 'double' };
const strings = (description?: string): StructuralSchema => ({ type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'atomic', ...(description ? { description } : {}) });

/** apiextensions v1 JSON: any JSON value. */
const jsonSchema: StructuralSchema = {
  description: 'JSON represents any valid JSON value. These types are supported: bool, int64, float64, string, []interface{}, map[string]interface{} and nil.',
  'x-kubernetes-preserve-unknown-fields': true,
};

const jsonSchemaPropsProperties: Record<string, StructuralSchema> = {};

/**
 * apiextensions v1 JSONSchemaProps. Recursive: its properties refer back
 * to it (the object graph is cyclic, which data-driven walkers and the
 * OpenAPI builder, stopping at `x-plinth-ref`, handle).
 */
export const jsonSchemaPropsSchema: StructuralSchema = {
  type: 'object',
  description: 'JSONSchemaProps is a JSON-Schema following Specification Draft 4 (http://json-schema.org/).',
  properties: jsonSchemaPropsProperties,
};

const props = (description?: string) => refTo(APIEXTENSIONS_V1_NAMES.props, jsonSchemaPropsSchema, description);
/** JSONSchemaPropsOrBool / OrArray: a schema, a bool or an array; untyped so every form decodes. */
const propsOr = (name: string, description: string): StructuralSchema =>
  refTo(name, { description, properties: jsonSchemaPropsProperties, items: jsonSchemaPropsSchema }, undefined);
const json = (description?: string) => refTo(APIEXTENSIONS_V1_NAMES.json, jsonSchema, description);

const validationRuleSchema: StructuralSchema = {
  type: 'object',
  description: 'ValidationRule describes a validation rule written in the CEL expression language.',
  required: ['rule'],
  properties: {
    fieldPath: str('fieldPath represents the field path returned when the validation fails. It must be a relative JSON path (i.e. with array notation) scoped to the location of this x-kubernetes-validations extension in the schema and refer to an existing field.'),
    message: str('Message represents the message displayed when validation fails. The message is required if the Rule contains line breaks. The message must not contain line breaks. If unset, the message is "failed rule: {Rule}".'),
    messageExpression: str('MessageExpression declares a CEL expression that evaluates to the validation failure message that is returned when this rule fails. Since messageExpression is used as a failure message, it must evaluate to a string.'),
    optionalOldSelf: bool('optionalOldSelf is used to opt a transition rule into evaluation even when the object is first created, or if the old object is missing the value.'),
    reason: str('reason provides a machine-readable validation failure reason that is returned to the caller when a request fails this validation rule. The currently supported reasons are: "FieldValueInvalid", "FieldValueForbidden", "FieldValueRequired", "FieldValueDuplicate". If not set, default to use "FieldValueInvalid".'),
    rule: str('Rule represents the expression which will be evaluated by CEL. The Rule is scoped to the location of the x-kubernetes-validations extension in the schema. The `self` variable in the CEL expression is bound to the scoped value.'),
  },
};

Object.assign(jsonSchemaPropsProperties, {
  $ref: str(),
  $schema: str(),
  additionalItems: propsOr(APIEXTENSIONS_V1_NAMES.propsOrBool, 'JSONSchemaPropsOrBool represents JSONSchemaProps or a boolean value. Defaults to true for the boolean property.'),
  additionalProperties: propsOr(APIEXTENSIONS_V1_NAMES.propsOrBool, 'JSONSchemaPropsOrBool represents JSONSchemaProps or a boolean value. Defaults to true for the boolean property.'),
  allOf: { type: 'array', items: props(), 'x-kubernetes-list-type': 'atomic' },
  anyOf: { type: 'array', items: props(), 'x-kubernetes-list-type': 'atomic' },
  default: json('default is a default value for undefined object fields. Defaulting is a beta feature under the CustomResourceDefaulting feature gate. Defaulting requires spec.preserveUnknownFields to be false.'),
  definitions: { type: 'object', additionalProperties: props() },
  dependencies: { type: 'object', additionalProperties: { description: 'JSONSchemaPropsOrStringArray represents a JSONSchemaProps or a string array.', 'x-kubernetes-preserve-unknown-fields': true } },
  description: str(),
  enum: { type: 'array', items: json(), 'x-kubernetes-list-type': 'atomic' },
  example: json(),
  exclusiveMaximum: bool(),
  exclusiveMinimum: bool(),
  externalDocs: refTo(APIEXTENSIONS_V1_NAMES.externalDocs, { type: 'object', description: 'ExternalDocumentation allows referencing an external resource for extended documentation.', properties: { description: str(), url: str() } }),
  format: str('format is an OpenAPI v3 format string. Unknown formats are ignored. The following formats are validated: bsonobjectid, uri, email, hostname, ipv4, ipv6, cidr, mac, uuid, uuid3, uuid4, uuid5, isbn, isbn10, isbn13, creditcard, ssn, hexcolor, rgbcolor, byte, password, date, duration, datetime.'),
  id: str(),
  items: propsOr(APIEXTENSIONS_V1_NAMES.propsOrArray, 'JSONSchemaPropsOrArray represents a value that can either be a JSONSchemaProps or an array of JSONSchemaProps. Mainly here for serialization purposes.'),
  maxItems: int64,
  maxLength: int64,
  maxProperties: int64,
  maximum: double,
  minItems: int64,
  minLength: int64,
  minProperties: int64,
  minimum: double,
  multipleOf: double,
  not: props(),
  nullable: bool(),
  oneOf: { type: 'array', items: props(), 'x-kubernetes-list-type': 'atomic' },
  pattern: str(),
  patternProperties: { type: 'object', additionalProperties: props() },
  properties: { type: 'object', additionalProperties: props() },
  required: strings(),
  title: str(),
  type: str(),
  uniqueItems: bool(),
  'x-kubernetes-embedded-resource': bool('x-kubernetes-embedded-resource defines that the value is an embedded Kubernetes runtime.Object, with TypeMeta and ObjectMeta. The type must be object. It is allowed to further restrict the embedded object. kind, apiVersion and metadata are validated automatically.'),
  'x-kubernetes-int-or-string': bool('x-kubernetes-int-or-string specifies that this value is either an integer or a string. If this is true, an empty type is allowed and type as child of anyOf is permitted if following one of the following patterns: 1) anyOf: - type: integer - type: string 2) allOf: - anyOf: - type: integer - type: string - ... zero or more'),
  'x-kubernetes-list-map-keys': strings('x-kubernetes-list-map-keys annotates an array with the x-kubernetes-list-type `map` by specifying the keys used as the index of the map.'),
  'x-kubernetes-list-type': str('x-kubernetes-list-type annotates an array to further describe its topology. This extension must only be used on lists and may have 3 possible values: atomic, set, map.'),
  'x-kubernetes-map-type': str('x-kubernetes-map-type annotates an object to further describe its topology. This extension must only be used when type is object and may have 2 possible values: granular, atomic.'),
  'x-kubernetes-preserve-unknown-fields': bool('x-kubernetes-preserve-unknown-fields stops the API server decoding step from pruning fields which are not specified in the validation schema.'),
  'x-plinth-feature-gate': str('x-plinth-feature-gate (a Plinth extension) names the feature gate that governs this property: while the gate is off, the property is dropped on create, and on update unless the stored object already uses it. The gate must be known to the server.'),
  'x-plinth-feature-gated-values': {
    type: 'object',
    description: 'x-plinth-feature-gated-values (a Plinth extension) maps enum values of this property to the feature gate each needs: while a gate is off, its value is refused on create, and on update unless the stored object already holds it. Every value must be in enum; every gate must be known to the server.',
    additionalProperties: { type: 'string' },
  },
  'x-kubernetes-validations': {
    type: 'array',
    description: 'x-kubernetes-validations describes a list of validation rules written in the CEL expression language.',
    items: refTo(APIEXTENSIONS_V1_NAMES.rule, validationRuleSchema),
    'x-kubernetes-list-type': 'map',
    'x-kubernetes-list-map-keys': ['rule'],
    'x-kubernetes-patch-strategy': 'merge',
    'x-kubernetes-patch-merge-key': 'rule',
  },
});

const namesSchema: StructuralSchema = {
  type: 'object',
  description: 'CustomResourceDefinitionNames indicates the names to serve this CustomResourceDefinition',
  required: ['plural', 'kind'],
  properties: {
    categories: strings('categories is a list of grouped resources this custom resource belongs to (e.g. \'all\'). This is published in API discovery documents, and used by clients to support invocations like `kubectl get all`.'),
    kind: str('kind is the serialized kind of the resource. It is normally CamelCase and singular. Custom resource instances will use this value as the `kind` attribute in API calls.'),
    listKind: str('listKind is the serialized kind of the list for this resource. Defaults to "`kind`List".'),
    plural: str('plural is the plural name of the resource to serve. The custom resources are served under `/apis/<group>/<version>/.../<plural>`. Must match the name of the CustomResourceDefinition (in the form `<names.plural>.<group>`). Must be all lowercase.'),
    shortNames: strings('shortNames are short names for the resource, exposed in API discovery documents, and used by clients to support invocations like `kubectl get <shortname>`. It must be all lowercase.'),
    singular: str('singular is the singular name of the resource. It must be all lowercase. Defaults to lowercased `kind`.'),
  },
};

const columnSchema: StructuralSchema = {
  type: 'object',
  description: 'CustomResourceColumnDefinition specifies a column for server side printing.',
  required: ['name', 'type', 'jsonPath'],
  properties: {
    description: str('description is a human readable description of this column.'),
    format: str('format is an optional OpenAPI type definition for this column. The \'name\' format is applied to the primary identifier column to assist in clients identifying column is the resource name.'),
    jsonPath: str('jsonPath is a simple JSON path (i.e. with array notation) which is evaluated against each custom resource to produce the value for this column.'),
    name: str('name is a human readable name for the column.'),
    priority: { type: 'integer', format: 'int32', description: 'priority is an integer defining the relative importance of this column compared to others. Lower numbers are considered higher priority. Columns that may be omitted in limited space scenarios should be given a priority greater than 0.' },
    type: str('type is an OpenAPI type definition for this column. See https://github.com/OAI/OpenAPI-Specification/blob/master/versions/2.0.md#data-types for details.'),
  },
};

const subresourcesSchema: StructuralSchema = {
  type: 'object',
  description: 'CustomResourceSubresources defines the status and scale subresources for CustomResources.',
  properties: {
    scale: refTo(APIEXTENSIONS_V1_NAMES.scale, {
      type: 'object',
      description: 'CustomResourceSubresourceScale defines how to serve the scale subresource for CustomResources.',
      required: ['specReplicasPath', 'statusReplicasPath'],
      properties: {
        labelSelectorPath: str('labelSelectorPath defines the JSON path inside of a custom resource that corresponds to Scale `status.selector`.'),
        specReplicasPath: str('specReplicasPath defines the JSON path inside of a custom resource that corresponds to Scale `spec.replicas`.'),
        statusReplicasPath: str('statusReplicasPath defines the JSON path inside of a custom resource that corresponds to Scale `status.replicas`.'),
      },
    }, 'scale indicates the custom resource should serve a `/scale` subresource that returns an `autoscaling/v1` Scale object.'),
    status: refTo(APIEXTENSIONS_V1_NAMES.statusSub, {
      type: 'object',
      description: 'CustomResourceSubresourceStatus defines how to serve the status subresource for CustomResources. Status is represented by the `.status` JSON path inside of a CustomResource. When set, * exposes a /status subresource for the custom resource * PUT requests to the /status subresource take a custom resource object, and ignore changes to anything except the status stanza * PUT/POST/PATCH requests to the custom resource ignore changes to the status stanza',
      'x-kubernetes-preserve-unknown-fields': true,
    }, 'status indicates the custom resource should serve a `/status` subresource. When enabled: 1. requests to the custom resource primary endpoint ignore changes to the `status` stanza of the object. 2. requests to the custom resource `/status` subresource ignore changes to anything other than the `status` stanza of the object.'),
  },
};

const versionSchema: StructuralSchema = {
  type: 'object',
  description: 'CustomResourceDefinitionVersion describes a version for CRD.',
  required: ['name', 'served', 'storage'],
  properties: {
    additionalPrinterColumns: { type: 'array', description: 'additionalPrinterColumns specifies additional columns returned in Table output. If no columns are specified, a single column displaying the age of the custom resource is used.', items: refTo(APIEXTENSIONS_V1_NAMES.column, columnSchema), 'x-kubernetes-list-type': 'atomic' },
    deprecated: bool('deprecated indicates this version of the custom resource API is deprecated. When set to true, API requests to this version receive a warning header in the server response. Defaults to false.'),
    deprecationWarning: str('deprecationWarning overrides the default warning returned to API clients. May only be set when `deprecated` is true. The default warning indicates this version is deprecated and recommends use of the newest served version of equal or greater stability, if one exists.'),
    name: str('name is the version name, e.g. “v1”, “v2beta1”, etc. The custom resources are served under this version at `/apis/<group>/<version>/...` if `served` is true.'),
    schema: refTo(APIEXTENSIONS_V1_NAMES.validation, { type: 'object', description: 'CustomResourceValidation is a list of validation methods for CustomResources.', properties: { openAPIV3Schema: props('openAPIV3Schema is the OpenAPI v3 schema to use for validation and pruning.') } }, 'schema describes the schema used for validation, pruning, and defaulting of this version of the custom resource.'),
    selectableFields: { type: 'array', description: 'selectableFields specifies paths to fields that may be used as field selectors. A maximum of 8 selectable fields are allowed.', items: refTo(APIEXTENSIONS_V1_NAMES.selectableField, { type: 'object', description: 'SelectableField specifies the JSON path of a field that may be used with field selectors.', required: ['jsonPath'], properties: { jsonPath: str('jsonPath is a simple JSON path which is evaluated against each custom resource to produce a field selector value.') } }), 'x-kubernetes-list-type': 'atomic' },
    served: bool('served is a flag enabling/disabling this version from being served via REST APIs'),
    storage: bool('storage indicates this version should be used when persisting custom resources to storage. There must be exactly one version with storage=true.'),
    subresources: refTo(APIEXTENSIONS_V1_NAMES.subresources, subresourcesSchema, 'subresources specify what subresources this version of the defined custom resource have.'),
  },
};

const webhookConversionSchema: StructuralSchema = {
  type: 'object',
  description: 'WebhookConversion describes how to call a conversion webhook',
  required: ['conversionReviewVersions'],
  properties: {
    clientConfig: refTo(APIEXTENSIONS_V1_NAMES.webhookClientConfig, {
      type: 'object',
      description: 'WebhookClientConfig contains the information to make a TLS connection with the webhook.',
      properties: {
        caBundle: { type: 'string', format: 'byte', description: 'caBundle is a PEM encoded CA bundle which will be used to validate the webhook\'s server certificate. If unspecified, system trust roots on the apiserver are used.' },
        service: refTo(APIEXTENSIONS_V1_NAMES.serviceReference, {
          type: 'object',
          description: 'ServiceReference holds a reference to Service.legacy.k8s.io',
          required: ['namespace', 'name'],
          properties: {
            name: str('name is the name of the service. Required'),
            namespace: str('namespace is the namespace of the service. Required'),
            path: str('path is an optional URL path at which the webhook will be contacted.'),
            port: { type: 'integer', format: 'int32', default: 443, description: 'port is an optional service port at which the webhook will be contacted. `port` should be a valid port number (1-65535, inclusive). Defaults to 443 for backward compatibility.' },
          },
        }, 'service is a reference to the service for this webhook. Either service or url must be specified.\n\nIf the webhook is running within the cluster, then you should use `service`.'),
        url: str('url gives the location of the webhook, in standard URL form (`scheme://host:port/path`). Exactly one of `url` or `service` must be specified.'),
      },
    }, 'clientConfig is the instructions for how to call the webhook if strategy is `Webhook`.'),
    conversionReviewVersions: strings('conversionReviewVersions is an ordered list of preferred `ConversionReview` versions the Webhook expects. The API server will use the first version in the list which it supports. If none of the versions specified in this list are supported by API server, conversion will fail for the custom resource. If a persisted Webhook configuration specifies allowed versions and does not include any versions known to the API Server, calls to the webhook will fail.'),
  },
};

const specSchema: StructuralSchema = {
  type: 'object',
  description: 'CustomResourceDefinitionSpec describes how a user wants their resource to appear',
  required: ['group', 'names', 'scope', 'versions'],
  properties: {
    conversion: refTo(APIEXTENSIONS_V1_NAMES.conversion, {
      type: 'object',
      description: 'CustomResourceConversion describes how to convert different versions of a CR.',
      required: ['strategy'],
      properties: {
        strategy: str('strategy specifies how custom resources are converted between versions. Allowed values are: - `"None"`: The converter only change the apiVersion and would not touch any other field in the custom resource. - `"Webhook"`: API Server will call to an external webhook to do the conversion. Additional information is needed for this option. This requires spec.preserveUnknownFields to be false, and spec.conversion.webhook to be set.'),
        webhook: refTo(APIEXTENSIONS_V1_NAMES.webhookConversion, webhookConversionSchema, 'webhook describes how to call the conversion webhook. Required when `strategy` is set to `"Webhook"`.'),
      },
    }, 'conversion defines conversion settings for the CRD.'),
    group: str('group is the API group of the defined custom resource. The custom resources are served under `/apis/<group>/...`. Must match the name of the CustomResourceDefinition (in the form `<names.plural>.<group>`).'),
    names: refTo(APIEXTENSIONS_V1_NAMES.names, namesSchema, 'names specify the resource and kind names for the custom resource.'),
    preserveUnknownFields: bool('preserveUnknownFields indicates that object fields which are not specified in the OpenAPI schema should be preserved when persisting to storage. apiVersion, kind, metadata and known fields inside metadata are always preserved. This field is deprecated in favor of setting `x-preserve-unknown-fields` to true in `spec.versions[*].schema.openAPIV3Schema`.'),
    scope: str('scope indicates whether the defined custom resource is cluster- or namespace-scoped. Allowed values are `Cluster` and `Namespaced`.'),
    versions: { type: 'array', description: 'versions is the list of all API versions of the defined custom resource. Version names are used to compute the order in which served versions are listed in API discovery.', items: refTo(APIEXTENSIONS_V1_NAMES.version, versionSchema), 'x-kubernetes-list-type': 'atomic' },
  },
};

const conditionSchema: StructuralSchema = {
  type: 'object',
  description: 'CustomResourceDefinitionCondition contains details for the current condition of this pod.',
  required: ['type', 'status'],
  properties: {
    lastTransitionTime: refTo('io.k8s.apimachinery.pkg.apis.meta.v1.Time', timeSchema, 'lastTransitionTime last time the condition transitioned from one status to another.'),
    message: str('message is a human-readable message indicating details about last transition.'),
    observedGeneration: {
      type: 'integer',
      format: 'int64',
      description: 'observedGeneration represents the .metadata.generation that the condition was set based upon. For instance, if .metadata.generation is currently 12, but the .status.conditions[x].observedGeneration is 9, the condition is out of date with respect to the current state of the instance.',
    },
    reason: str('reason is a unique, one-word, CamelCase reason for the condition\'s last transition.'),
    status: str('status is the status of the condition. Can be True, False, Unknown.'),
    type: str('type is the type of the condition. Types include Established, NamesAccepted and Terminating.'),
  },
};

const statusSchema: StructuralSchema = {
  type: 'object',
  description: 'CustomResourceDefinitionStatus indicates the state of the CustomResourceDefinition',
  properties: {
    acceptedNames: refTo(APIEXTENSIONS_V1_NAMES.names, namesSchema, 'acceptedNames are the names that are actually being used to serve discovery. They may be different than the names in spec.'),
    conditions: { type: 'array', description: 'conditions indicate state for particular aspects of a CustomResourceDefinition', items: refTo(APIEXTENSIONS_V1_NAMES.condition, conditionSchema), 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['type'] },
    storedVersions: strings('storedVersions lists all versions of CustomResources that were ever persisted. Tracking these versions allows a migration path for stored versions in etcd.'),
  },
};

/** apiextensions.k8s.io/v1 CustomResourceDefinition. */
export const customResourceDefinitionSchema: StructuralSchema = {
  type: 'object',
  description: 'CustomResourceDefinition represents a resource that should be exposed on the API server.  Its name MUST be in the format <.spec.name>.<.spec.group>.',
  required: ['spec'],
  properties: {
    ...typeMetaProperties(),
    metadata: objectMetaProperty('Standard object\'s metadata More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata'),
    spec: refTo(APIEXTENSIONS_V1_NAMES.spec, specSchema, 'spec describes how the user wants the resources to appear'),
    status: refTo(APIEXTENSIONS_V1_NAMES.status, statusSchema, 'status indicates the actual state of the CustomResourceDefinition'),
  },
};
