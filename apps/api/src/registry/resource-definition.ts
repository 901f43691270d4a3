import type { FieldError } from '../errors/field-error.js';
import type { StructuralSchema } from '../schema/structural-schema.js';
import type { KubeObject } from './kube-object.js';

/**
 * A kind's strategy, in the manner of k8s.io/apiserver's rest strategies.
 * Strategies are pure: no I/O. The generic handlers call them in a fixed
 * order: prepareForCreate → validate on create; prepareForUpdate →
 * validateUpdate on update. Methods that mutate say so.
 */
export interface ResourceStrategy {
  /** Clears fields the client may not set on create (e.g. status) and applies defaults. Mutates `obj`. */
  prepareForCreate(obj: KubeObject): void;
  /** Carries over what an update may not change (e.g. status on the main resource). Mutates `obj`. */
  prepareForUpdate(obj: KubeObject, old: KubeObject): void;
  /** Kind-specific validation of a new object (metadata is validated by the caller). */
  validate(obj: KubeObject): FieldError[];
  /** Kind-specific validation of an update (immutability etc.). */
  validateUpdate(obj: KubeObject, old: KubeObject): FieldError[];
  /** Normalises stored form (e.g. Secret stringData → data). Mutates `obj`. */
  canonicalize?(obj: KubeObject): void;
  /** Whether PUT on a missing object creates it. */
  allowCreateOnUpdate: boolean;
  /** Whether PUT without metadata.resourceVersion is accepted. */
  allowUnconditionalUpdate: boolean;
}

/** One Table column, as metav1.TableColumnDefinition. */
export interface TableColumn {
  name: string;
  type: string;
  format: string;
  description: string;
  priority: number;
}

/** How a kind renders as a Table. */
export interface TableConvertor {
  columns: TableColumn[];
  /** One cell per column for `obj`; `now` is the server time used for ages. */
  cells(obj: KubeObject, now: Date): unknown[];
}

/** A subresource the kind serves (status, scale, finalize…). */
export interface SubresourceDefinition {
  name: string;
  kind: string;
  group: string;
  version: string;
  verbs: string[];
}

/**
 * A served resource: everything discovery, OpenAPI, the handlers and the
 * store need to know about one group/version/resource.
 */
export interface ResourceDefinition {
  group: string;
  version: string;
  /** Plural, lower case: `configmaps`. */
  resource: string;
  singular: string;
  kind: string;
  listKind: string;
  namespaced: boolean;
  shortNames: string[];
  categories: string[];
  verbs: string[];
  subresources: SubresourceDefinition[];
  /** The kind's schema, used for OpenAPI, explain and unknown-field detection. */
  schema: StructuralSchema;
  strategy: ResourceStrategy;
  table: TableConvertor;
  /** Extra field-selector fields beyond metadata.name and metadata.namespace. */
  selectableFields: Record<string, (obj: KubeObject) => string>;
  /** The storage key's resource part, `group/resource` (`/configmaps` for core). */
  storageResource: string;
  /** Whether metadata.generation is set on create and bumped on spec changes. */
  tracksGeneration: boolean;
  /** Whether DELETE answers with the deleted object (true) or a Success Status (false), per upstream. */
  returnDeletedObject: boolean;
  /** How names are validated: DNS-1123 subdomain by default, label for namespaces. */
  nameValidation: 'subdomain' | 'label' | 'path-segment';
}

/** `apps/v1` or `v1` for the core group. */
export function groupVersion(def: { group: string; version: string }): string {
  return def.group ? `${def.group}/${def.version}` : def.version;
}
