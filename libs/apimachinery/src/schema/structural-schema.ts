/**
 * The subset of OpenAPI v3 schema that Kubernetes calls "structural": the one
 * shape used for built-in kinds and CRDs alike, by OpenAPI publishing,
 * `kubectl explain`, unknown-field detection, pruning, defaulting and
 * strategic-merge-patch strategies.
 */
export interface StructuralSchema {
  type?: 'object' | 'array' | 'string' | 'integer' | 'number' | 'boolean';
  description?: string;
  format?: string;
  properties?: Record<string, StructuralSchema>;
  /** A schema for map values, or `true`/`false`. */
  additionalProperties?: StructuralSchema | boolean;
  items?: StructuralSchema;
  required?: string[];
  enum?: unknown[];
  default?: unknown;
  nullable?: boolean;
  maximum?: number;
  minimum?: number;
  exclusiveMaximum?: boolean;
  exclusiveMinimum?: boolean;
  maxLength?: number;
  minLength?: number;
  pattern?: string;
  maxItems?: number;
  minItems?: number;
  uniqueItems?: boolean;
  maxProperties?: number;
  minProperties?: number;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-embedded-resource'?: boolean;
  'x-kubernetes-list-type'?: 'atomic' | 'set' | 'map';
  'x-kubernetes-list-map-keys'?: string[];
  'x-kubernetes-map-type'?: 'atomic' | 'granular';
  /** Strategic merge patch: 'merge', 'replace', 'retainKeys', or combinations like 'merge,retainKeys'. */
  'x-kubernetes-patch-strategy'?: string;
  'x-kubernetes-patch-merge-key'?: string;
  'x-kubernetes-validations'?: Array<{ rule: string; message?: string; messageExpression?: string; reason?: string; fieldPath?: string; optionalOldSelf?: boolean }>;
  /** Marks a reference to a shared definition (e.g. ObjectMeta) for OpenAPI publishing; the schema is still inlined. */
  'x-plinth-ref'?: string;
  /** Plinth's CRD extension: the feature gate without which servers drop this property (see docs/feature-gates.md). */
  'x-plinth-feature-gate'?: string;
  /** Plinth's CRD extension: enum values of this node and the feature gate each needs. */
  'x-plinth-feature-gated-values'?: Record<string, string>;
}
