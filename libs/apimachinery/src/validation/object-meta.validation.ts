import { fieldErrors, type FieldError } from '../errors/field-error.js';
import type { ObjectMeta, OwnerReference } from '../object/kube-object.js';
import {
  byteLength,
  isDNS1123Label,
  isQualifiedName,
  isValidLabelValue,
  validateName,
  type NameValidation,
} from './name-validation.js';
import { goQuote, isGoPrintable } from '../text/go-strings.js';

/** Upstream FieldImmutableErrorMsg. */
export const FIELD_IMMUTABLE_MSG = 'field is immutable';
/** Upstream TotalAnnotationSizeLimitB: 256 KiB over all keys and values. */
export const TOTAL_ANNOTATION_SIZE_LIMIT = 256 * 1024;

const FIELD_MANAGER_MAX_LENGTH = 128;
const MAX_SUBRESOURCE_NAME_LENGTH = 256;
const STANDARD_FINALIZERS = new Set(['kubernetes', 'orphan', 'foregroundDeletion']);

/** How a kind's metadata is checked on create. */
export interface ObjectMetaOptions {
  /** Namespaced kinds require metadata.namespace; cluster-scoped kinds forbid it. */
  namespaced: boolean;
  /** The rule metadata.name (and the generateName prefix) must follow. */
  nameValidation: NameValidation;
  /**
   * When true, metadata.name is required even if generateName is set (the
   * upstream view: validation runs after the name was generated). When
   * false or omitted, generateName alone suffices.
   */
  requireName?: boolean;
}

/** Labels: keys are qualified names, values label values; errors sit on `metadata.labels`. */
function validateLabels(labels: Record<string, string> | undefined, field: string): FieldError[] {
  const errs: FieldError[] = [];
  for (const [key, raw] of Object.entries(labels ?? {})) {
    for (const msg of isQualifiedName(key)) errs.push(fieldErrors.invalid(field, key, msg));
    const value = String(raw ?? '');
    for (const msg of isValidLabelValue(value)) errs.push(fieldErrors.invalid(field, value, msg));
  }
  return errs;
}

/** Annotations: keys are qualified names ignoring case; keys plus values at most 256 KiB. */
function validateAnnotations(annotations: Record<string, string> | undefined, field: string): FieldError[] {
  const errs: FieldError[] = [];
  let total = 0;
  for (const [key, raw] of Object.entries(annotations ?? {})) {
    for (const msg of isQualifiedName(key.toLowerCase())) errs.push(fieldErrors.invalid(field, key, msg));
    total += byteLength(key) + byteLength(String(raw ?? ''));
  }
  if (total > TOTAL_ANNOTATION_SIZE_LIMIT) errs.push(fieldErrors.tooLong(field, '', TOTAL_ANNOTATION_SIZE_LIMIT));
  return errs;
}

/** schema.ParseGroupVersion: group and version, or undefined when the string has more than one '/'. */
function parseGroupVersion(apiVersion: string): { group: string; version: string } | undefined {
  if (apiVersion === '' || apiVersion === '/') return { group: '', version: '' };
  const parts = apiVersion.split('/');
  if (parts.length === 1) return { group: '', version: apiVersion };
  if (parts.length === 2) return { group: parts[0], version: parts[1] };
  return undefined;
}

function validateOwnerReference(ref: OwnerReference, field: string): FieldError[] {
  const errs: FieldError[] = [];
  const apiVersion = ref.apiVersion ?? '';
  const gv = parseGroupVersion(apiVersion);
  if (apiVersion.length === 0) errs.push(fieldErrors.required(`${field}.apiVersion`, 'must not be empty'));
  else if (!gv?.version) errs.push(fieldErrors.invalid(`${field}.apiVersion`, apiVersion, 'must be <group>/<version> or <version>'));
  if (!ref.kind) errs.push(fieldErrors.required(`${field}.kind`, 'must not be empty'));
  if (!ref.name) errs.push(fieldErrors.required(`${field}.name`, 'must not be empty'));
  if (!ref.uid) errs.push(fieldErrors.required(`${field}.uid`, 'must not be empty'));
  // Upstream bans core/v1 Event as an owner.
  if (gv?.group === '' && gv.version === 'v1' && ref.kind === 'Event') {
    errs.push(fieldErrors.invalid(field, ref, '/v1, Kind=Event is disallowed from being an owner'));
  }
  return errs;
}

/** Owner references: required fields per entry, and at most one controller. */
function validateOwnerReferences(refs: OwnerReference[] | undefined, field: string): FieldError[] {
  const errs: FieldError[] = [];
  let firstController = '';
  (Array.isArray(refs) ? refs : []).forEach((given, i) => {
    // A null element is Go's zero-valued reference: every required field is missing.
    const ref: OwnerReference = given && typeof given === 'object' ? given : ({} as OwnerReference);
    errs.push(...validateOwnerReference(ref, `${field}[${i}]`));
    if (ref.controller !== true) return;
    const current = `${ref.kind ?? ''}/${ref.name ?? ''}`;
    if (firstController === '') {
      firstController = current;
      return;
    }
    errs.push(
      fieldErrors.invalid(
        field,
        refs,
        `Only one reference can have Controller set to true. Found "true" in references for ${firstController} and ${current}`,
      ),
    );
  });
  return errs;
}

/** Finalizers: qualified names (errors on the list path, unindexed), and not both orphan and foregroundDeletion. */
function validateFinalizers(finalizers: string[] | undefined, field: string): FieldError[] {
  const errs: FieldError[] = [];
  const list = Array.isArray(finalizers) ? finalizers : [];
  for (const f of list) errs.push(...validateFinalizerName(typeof f === 'string' ? f : '', field));
  if (list.includes('orphan') && list.includes('foregroundDeletion')) {
    errs.push(fieldErrors.invalid(field, list, 'finalizer orphan and foregroundDeletion cannot be both set'));
  }
  return errs;
}

/** Upstream ValidateFinalizerName: the name must be a qualified name. Errors sit on `field` as given. */
export function validateFinalizerName(name: string, field: string): FieldError[] {
  return isQualifiedName(name).map((msg) => fieldErrors.invalid(field, name, msg));
}

/**
 * The extra rule built-in (core) kinds apply to finalizer names: a name
 * without '/' must be a standard one (kubernetes, orphan,
 * foregroundDeletion). Custom resources do not apply it. Returns [] or one error.
 */
export function validateKubeFinalizerName(name: string, field: string): FieldError[] {
  if (name.includes('/') || STANDARD_FINALIZERS.has(name)) return [];
  return [fieldErrors.invalid(field, name, 'name is neither a standard finalizer name nor is it fully qualified')];
}

/** The core-kind finalizer rule over metadata.finalizers, indexed as upstream (`metadata.finalizers[i]`). */
export function validateKubeFinalizers(meta: ObjectMeta): FieldError[] {
  return (meta.finalizers ?? []).flatMap((f, i) => validateKubeFinalizerName(f, `metadata.finalizers[${i}]`));
}

function validateFieldManager(manager: string, field: string): FieldError[] {
  const errs: FieldError[] = [];
  if (byteLength(manager) > FIELD_MANAGER_MAX_LENGTH) errs.push(fieldErrors.tooLong(field, '', FIELD_MANAGER_MAX_LENGTH));
  let position = 0;
  for (const ch of manager) {
    const cp = ch.codePointAt(0) ?? 0;
    if (!isGoPrintable(cp)) {
      const hex = cp.toString(16).toUpperCase().padStart(4, '0');
      errs.push(fieldErrors.invalid(field, manager, `invalid character U+${hex} (at position ${position})`));
    }
    position += byteLength(ch);
  }
  return errs;
}

/** managedFields entries: operation Apply/Update, fieldsType FieldsV1, printable manager, short subresource. */
function validateManagedFields(entries: unknown[] | undefined, field: string): FieldError[] {
  const errs: FieldError[] = [];
  (entries ?? []).forEach((raw, i) => {
    const entry = (typeof raw === 'object' && raw !== null ? raw : {}) as Record<string, unknown>;
    const path = `${field}[${i}]`;
    const operation = typeof entry.operation === 'string' ? entry.operation : '';
    if (operation === '') errs.push(fieldErrors.required(`${path}.operation`, 'must not be empty'));
    else if (operation !== 'Apply' && operation !== 'Update') {
      errs.push(fieldErrors.notSupported(`${path}.operation`, operation, ['Apply', 'Update']));
    }
    const fieldsType = typeof entry.fieldsType === 'string' ? entry.fieldsType : '';
    if (fieldsType !== '' && fieldsType !== 'FieldsV1') {
      errs.push(fieldErrors.invalid(`${path}.fieldsType`, fieldsType, 'must be `FieldsV1`'));
    }
    errs.push(...validateFieldManager(typeof entry.manager === 'string' ? entry.manager : '', `${path}.manager`));
    const subresource = typeof entry.subresource === 'string' ? entry.subresource : '';
    if (byteLength(subresource) > MAX_SUBRESOURCE_NAME_LENGTH) {
      errs.push(fieldErrors.tooLong(`${path}.subresource`, '', MAX_SUBRESOURCE_NAME_LENGTH));
    }
  });
  return errs;
}

/** The checks shared by create and update: labels, annotations, owner references, managedFields. */
function validateCommonMeta(meta: ObjectMeta): FieldError[] {
  return [
    ...validateLabels(meta.labels, 'metadata.labels'),
    ...validateAnnotations(meta.annotations, 'metadata.annotations'),
    ...validateOwnerReferences(meta.ownerReferences, 'metadata.ownerReferences'),
  ];
}

function validateNamespaceField(meta: ObjectMeta, namespaced: boolean): FieldError[] {
  const namespace = meta.namespace ?? '';
  if (!namespaced) {
    return namespace ? [fieldErrors.forbidden('metadata.namespace', 'not allowed on this type')] : [];
  }
  if (!namespace) return [fieldErrors.required('metadata.namespace', '')];
  return isDNS1123Label(namespace).map((msg) => fieldErrors.invalid('metadata.namespace', namespace, msg));
}

/**
 * Upstream ValidateObjectMetaAccessor: metadata of an object being created.
 * Errors use `metadata.*` paths and upstream texts. Does not mutate `meta`;
 * returns [] when valid. Core kinds additionally apply
 * validateKubeFinalizers (their kind validators do).
 */
export function validateObjectMeta(meta: ObjectMeta, opts: ObjectMetaOptions): FieldError[] {
  const errs: FieldError[] = [];
  const name = meta.name ?? '';
  const generateName = meta.generateName ?? '';
  if (generateName) {
    for (const msg of validateName(opts.nameValidation, generateName, true)) {
      errs.push(fieldErrors.invalid('metadata.generateName', generateName, msg));
    }
  }
  if (!name) {
    if (opts.requireName || !generateName) errs.push(fieldErrors.required('metadata.name', 'name or generateName is required'));
  } else {
    for (const msg of validateName(opts.nameValidation, name, false)) errs.push(fieldErrors.invalid('metadata.name', name, msg));
  }
  errs.push(...validateNamespaceField(meta, opts.namespaced));
  const generation = meta.generation ?? 0;
  if (generation < 0) errs.push(fieldErrors.invalid('metadata.generation', generation, 'must be greater than or equal to 0'));
  errs.push(...validateCommonMeta(meta));
  errs.push(...validateFinalizers(meta.finalizers, 'metadata.finalizers'));
  errs.push(...validateManagedFields(meta.managedFields, 'metadata.managedFields'));
  return errs;
}

/** Timestamps compare as instants (metav1.Time semantic equality); absent and "" are the zero time. */
function sameTime(a: string | undefined, b: string | undefined): boolean {
  if (!a || !b) return !a && !b;
  const ta = Date.parse(a);
  const tb = Date.parse(b);
  return Number.isFinite(ta) && Number.isFinite(tb) ? ta === tb : a === b;
}

function immutable(field: string, newValue: unknown, same: boolean): FieldError[] {
  return same ? [] : [fieldErrors.invalid(field, newValue, FIELD_IMMUTABLE_MSG)];
}

/** Upstream ValidateNoNewFinalizers: once deletion started, the finalizer set may only shrink. */
function validateNoNewFinalizers(newList: string[], oldList: string[]): FieldError[] {
  const old = new Set(oldList);
  const extra = [...new Set(newList.filter((f) => !old.has(f)))].sort();
  if (extra.length === 0) return [];
  const rendered = `[]string{${extra.map(goQuote).join(', ')}}`;
  return [
    fieldErrors.forbidden(
      'metadata.finalizers',
      `no new finalizers can be added if the object is being deleted, found new finalizers ${rendered}`,
    ),
  ];
}

function validateImmutableMeta(newMeta: ObjectMeta, oldMeta: ObjectMeta): FieldError[] {
  return [
    ...immutable('metadata.name', newMeta.name ?? '', (newMeta.name ?? '') === (oldMeta.name ?? '')),
    ...immutable('metadata.namespace', newMeta.namespace ?? '', (newMeta.namespace ?? '') === (oldMeta.namespace ?? '')),
    ...immutable('metadata.uid', newMeta.uid ?? '', (newMeta.uid ?? '') === (oldMeta.uid ?? '')),
    ...immutable(
      'metadata.creationTimestamp',
      newMeta.creationTimestamp || undefined,
      sameTime(newMeta.creationTimestamp, oldMeta.creationTimestamp),
    ),
    ...immutable(
      'metadata.deletionTimestamp',
      newMeta.deletionTimestamp || undefined,
      sameTime(newMeta.deletionTimestamp, oldMeta.deletionTimestamp),
    ),
    ...immutable(
      'metadata.deletionGracePeriodSeconds',
      newMeta.deletionGracePeriodSeconds,
      newMeta.deletionGracePeriodSeconds === oldMeta.deletionGracePeriodSeconds,
    ),
  ];
}

/**
 * Upstream ValidateObjectMetaAccessorUpdate: no new finalizers while
 * deleting, resourceVersion present (callers doing an unconditional update
 * must copy the stored resourceVersion in first, as upstream does),
 * generation not negative nor decremented, name/namespace/uid/
 * creationTimestamp/deletionTimestamp/deletionGracePeriodSeconds unchanged,
 * then labels, annotations, ownerReferences and managedFields of the new
 * metadata.
 *
 * With `opts`, the new metadata is also validated as on create, which is
 * what upstream's built-in kinds do on update (their update validators
 * re-run the create validation); without it only the update checks run, as
 * for custom resources. Pure; returns [] when valid.
 */
export function validateObjectMetaUpdate(newMeta: ObjectMeta, oldMeta: ObjectMeta, opts?: ObjectMetaOptions): FieldError[] {
  const errs: FieldError[] = [];
  if (oldMeta.deletionTimestamp) errs.push(...validateNoNewFinalizers(newMeta.finalizers ?? [], oldMeta.finalizers ?? []));
  if (!newMeta.resourceVersion) {
    errs.push(fieldErrors.invalid('metadata.resourceVersion', '', 'must be specified for an update'));
  }
  const generation = newMeta.generation ?? 0;
  if (generation < 0) errs.push(fieldErrors.invalid('metadata.generation', generation, 'must be greater than or equal to 0'));
  if (generation < (oldMeta.generation ?? 0)) {
    errs.push(fieldErrors.invalid('metadata.generation', generation, 'must not be decremented'));
  }
  errs.push(...validateImmutableMeta(newMeta, oldMeta));
  errs.push(...validateCommonMeta(newMeta));
  errs.push(...validateManagedFields(newMeta.managedFields, 'metadata.managedFields'));
  if (opts) errs.push(...validateObjectMeta(newMeta, opts));
  return errs;
}
