import type { ObjectKey } from '@plinth/storage';
import type { FieldError } from '@plinth/apimachinery';
import type { StructuralSchema } from '@plinth/apimachinery';
import type { JsonObject, KubeObject } from '@plinth/apimachinery';
import type { UserInfo } from '@plinth/apimachinery';

/**
 * What a strategy may consult besides the objects it is given: in-memory
 * reads only, so strategies stay free of I/O. The store passes one with
 * every call.
 */
export interface StrategyContext {
  /** The tenant the write belongs to. */
  tenant: string;
  /** Who makes the write (kinds that record their requester, as CertificateSigningRequest); absent outside a request. */
  user?: UserInfo;
  /** Whether the feature gate `name` is on: the server's gate, else the tenant's own (false for a gate nobody defined). */
  featureEnabled(name: string): boolean;
  /** The stage of feature gate `name` (`ALPHA`, `BETA`, `GA`, `DEPRECATED`), the server's or the tenant's; undefined for a gate nobody defined. */
  featureStage(name: string): string | undefined;
  /** Whether `name` is a gate of the server (tenants may not define it). */
  isServerFeature(name: string): boolean;
  /** The kind served to the tenant at group/version/resource (built-in or custom), or undefined. */
  lookup(group: string, version: string, resource: string): ResourceDefinition | undefined;
  /** The kind served to the tenant as group/version and kind name (built-in or custom), or undefined. */
  lookupKind(group: string, version: string, kind: string): ResourceDefinition | undefined;
  /**
   * Evaluates a custom resource's CEL validation rules away from the event
   * loop (on the CEL worker pool, charged to the tenant); resolves with the
   * rule violations. Absent: the caller evaluates them itself.
   */
  celRules?(job: CelRulesJob): Promise<FieldError[]>;
}

/** The CEL rules of one custom resource write, for {@link StrategyContext.celRules}. */
export interface CelRulesJob {
  /** Identifies `schema` (the same schema always has the same key): workers keep its compiled rules by it. */
  key: string;
  /** The version's structural schema, whose x-kubernetes-validations are evaluated. */
  schema: StructuralSchema;
  obj: unknown;
  /** The stored object on updates (transition rules and ratcheting). */
  old?: unknown;
}

/**
 * A kind's strategy, in the manner of k8s.io/apiserver's rest strategies.
 * Strategies are pure: no I/O (what they may consult comes in `ctx`). The
 * generic handlers call them in a fixed order: prepareForCreate → validate
 * on create; prepareForUpdate → validateUpdate on update. Methods that
 * mutate say so.
 */
export interface ResourceStrategy {
  /** Clears fields the client may not set on create (e.g. status) and applies defaults. Mutates `obj`. */
  prepareForCreate(obj: KubeObject, ctx: StrategyContext): void;
  /** Carries over what an update may not change (e.g. status on the main resource). Mutates `obj`. */
  prepareForUpdate(obj: KubeObject, old: KubeObject, ctx: StrategyContext): void;
  /** Kind-specific validation of a new object (metadata is validated by the caller); custom resources answer asynchronously (CEL rules run on workers). */
  validate(obj: KubeObject, ctx: StrategyContext): FieldError[] | Promise<FieldError[]>;
  /** Kind-specific validation of an update (immutability etc.). */
  validateUpdate(obj: KubeObject, old: KubeObject, ctx: StrategyContext): FieldError[] | Promise<FieldError[]>;
  /**
   * Whether a deleting object whose metadata.finalizers are all gone may be
   * removed now (upstream's ShouldDeleteDuringUpdate beyond the generic
   * check; namespaces also wait for spec.finalizers). Absent: yes.
   */
  finalized?(obj: KubeObject): boolean;
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
  /**
   * Every replica keeps a cache of these objects fed by the change stream
   * (CRDs, webhook configurations): a write is answered only once this
   * replica's stream has applied it, so the writer's next request sees it.
   */
  cachedOnEveryReplica?: boolean;
  /**
   * What a Go client's empty struct of the kind serialises to: the "live"
   * object a create's managed fields are computed against. Undefined:
   * `{metadata: {creationTimestamp: null}}` (custom resources: apiVersion and kind).
   */
  emptyObject?: () => JsonObject;
  /** Strategies of the subresources written through PUT/PATCH, by name (`status`, `finalize`); a subresource without one is read-only or has its own handler (scale). */
  subresourceStrategies?: Record<string, ResourceStrategy>;
  /**
   * Set when this version's objects are stored in another version's form
   * (events.k8s.io/v1 Events are stored as core/v1 ones): the store
   * converts on every read and write. Undefined: stored as served.
   */
  conversion?: StorageConversion;
  /** Set for custom resources (kinds served from a CustomResourceDefinition); undefined for built-in kinds. */
  custom?: CustomResourceHooks;
}

/** What differs for custom resources: schema-driven decoding, output conversion, subresources. */
export interface CustomResourceHooks {
  /**
   * Field validation and pruning of a decoded body, replacing the typed
   * (Go-struct) checks of built-in kinds: unknown fields are reported per
   * `mode` (Strict throws ApiError 400) and removed. Mutates `obj`.
   */
  decode(obj: KubeObject, body: { duplicates: string[]; yaml: boolean }, mode: 'Ignore' | 'Warn' | 'Strict', warnings: string[]): void;
  /** The stored object as this version serves it (apiVersion of the version, schema defaults applied). Does not mutate `obj`. */
  present(obj: KubeObject): KubeObject;
  /** Sent as a Warning header with every request to this version (deprecated versions). */
  deprecationWarning?: string;
  /** The CRD's storage version (`storage: true`), for discovery's storageVersionHash. */
  storageVersion?: string;
  /** The scale subresource's JSON paths, when it is served. */
  scale?: { specReplicasPath: string; statusReplicasPath: string; labelSelectorPath?: string };
  /** Set when the CRD converts through a webhook (`strategy: Webhook`): reads and writes convert with it. */
  remote?: RemoteConversion;
}

/**
 * Conversions that call out (a CRD's conversion webhook): asynchronous,
 * failing with ApiError 500 (`Internal error occurred: conversion webhook
 * for … failed: …`). Neither mutates its input.
 */
export interface RemoteConversion {
  /** Stored objects (any version) in this version's form, in order; one call for all not in it yet (a list page is one call), none when all are. `list` words failures as upstream does for lists. */
  fromStored(objs: KubeObject[], list?: boolean): Promise<KubeObject[]>;
  /** An object of this version in the storage version's form, pruned to that version's schema. */
  toStored(obj: KubeObject): Promise<KubeObject>;
  /** Stored objects of any version in the storage version's form, in order (one call for all not in it yet; storage version migration). */
  toStoredBatch(objs: KubeObject[]): Promise<KubeObject[]>;
}

/** Pure conversions between a version's served form and its stored form; each returns its input when it is already in the target form. */
export interface StorageConversion {
  toStored(obj: KubeObject): KubeObject;
  fromStored(obj: KubeObject): KubeObject;
}

/** A stored object in `def`'s served form (unchanged without a conversion). Does not mutate `obj`. */
export function fromStorage(def: ResourceDefinition, obj: KubeObject): KubeObject {
  return def.conversion ? def.conversion.fromStored(obj) : obj;
}

/** An object in `def`'s served form as it is stored (unchanged without a conversion). Does not mutate `obj`. */
export function toStorage(def: ResourceDefinition, obj: KubeObject): KubeObject {
  return def.conversion ? def.conversion.toStored(obj) : obj;
}

/**
 * Stored objects in `def`'s served form where that needs a call (CRD
 * conversion webhooks; one call for the batch); others unchanged, since
 * {@link presentObject} converts them. Does not mutate. May throw ApiError 500.
 */
export async function servedForms(def: ResourceDefinition, objs: KubeObject[], list = false): Promise<KubeObject[]> {
  return def.custom?.remote && objs.length > 0 ? def.custom.remote.fromStored(objs, list) : objs;
}

/** One stored object in `def`'s served form (see {@link servedForms}). */
export async function servedForm(def: ResourceDefinition, obj: KubeObject): Promise<KubeObject> {
  return def.custom?.remote ? (await def.custom.remote.fromStored([obj]))[0] : obj;
}

/** A stored object as `def`'s strategies see it: converted to the served version (by call or pure conversion). Does not mutate. */
export async function fromStorageForm(def: ResourceDefinition, obj: KubeObject): Promise<KubeObject> {
  return def.custom?.remote ? servedForm(def, obj) : fromStorage(def, obj);
}

/** An object of `def`'s served form as it is stored: pure conversion, or a call for CRD conversion webhooks. Does not mutate. */
export async function toStorageForm(def: ResourceDefinition, obj: KubeObject): Promise<KubeObject> {
  return def.custom?.remote ? def.custom.remote.toStored(obj) : toStorage(def, obj);
}

/** The verbs of a kind that serves the whole API (everything but subresources). */
export const STANDARD_VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

/** `obj` as `def` serves it to clients: custom resources are converted and defaulted; converted kinds converted; others unchanged. */
export function presentObject(def: ResourceDefinition, obj: KubeObject): KubeObject {
  return def.custom ? def.custom.present(obj) : fromStorage(def, obj);
}

/** `apps/v1` or `v1` for the core group. */
export function groupVersion(def: { group: string; version: string }): string {
  return def.group ? `${def.group}/${def.version}` : def.version;
}

/** The storage key of the object `name` of `def` in `tenant` (namespace ignored for cluster-scoped kinds). */
export function objectKey(tenant: string, def: ResourceDefinition, namespace: string, name: string): ObjectKey {
  return { tenant, resource: def.storageResource, namespace: def.namespaced ? namespace : '', name };
}
