import { type FieldError, fieldErrors, isPlainObject, isQualifiedName, type KubeObject } from '@plinth/apimachinery';

type Json = Record<string, unknown>;

/** The condition types of a migration (upstream's MigrationConditionType). */
export const MIGRATION_RUNNING = 'Running';
/** The migration has completed successfully. */
export const MIGRATION_SUCCEEDED = 'Succeeded';
/** The migration has failed. */
export const MIGRATION_FAILED = 'Failed';

const REASON = /^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$/;
const REASON_MESSAGE =
  "a condition reason must start with alphabetic character, optionally followed by a string of alphanumeric characters or '_,:', and must end with an alphanumeric character or '_' (e.g. 'my_name',  or 'MY_NAME',  or 'MyName',  or 'ReasonA,ReasonB',  or 'ReasonA:ReasonB', regex used for validation is '[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?')";

function obj(v: unknown): Json {
  return isPlainObject(v) ? v : {};
}

/** spec.resource of `o` (group and resource; '' when unset). */
export function migrationResource(o: KubeObject): { group: string; resource: string } {
  const r = obj(obj(o.spec).resource);
  return { group: typeof r.group === 'string' ? r.group : '', resource: typeof r.resource === 'string' ? r.resource : '' };
}

/** Upstream's ValidateStorageVersionMigration for v1beta1: spec.resource.resource is required. Does not mutate. */
export function validateStorageVersionMigration(o: KubeObject): FieldError[] {
  return migrationResource(o).resource === '' ? [fieldErrors.required('spec.resource.resource', 'resource is required')] : [];
}

/** Upstream's update validation: the migration's and spec.resource's group and resource are immutable. */
export function validateStorageVersionMigrationUpdate(o: KubeObject, old: KubeObject): FieldError[] {
  const errs = validateStorageVersionMigration(o);
  const now = migrationResource(o);
  const was = migrationResource(old);
  if (now.group !== was.group) errs.push(fieldErrors.invalid('spec.resource.group', now.group, 'field is immutable'));
  if (now.resource !== was.resource) errs.push(fieldErrors.invalid('spec.resource.resource', now.resource, 'field is immutable'));
  return errs;
}

function conditions(o: KubeObject): Json[] {
  const c = obj(o.status).conditions;
  return Array.isArray(c) ? c.filter(isPlainObject) : [];
}

/** Whether `o` has condition `type` with status True. */
export function hasTrueCondition(o: KubeObject, type: string): boolean {
  return conditions(o).some((c) => c.type === type && c.status === 'True');
}

/** metav1.ValidateConditions: unique types, label-name types, a known status, a time, a well-formed reason, bounded message. */
function validateConditions(o: KubeObject): FieldError[] {
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  conditions(o).forEach((c, i) => {
    const f = `status.conditions[${i}]`;
    const type = String(c.type ?? '');
    if (seen.has(type)) errs.push(fieldErrors.duplicate(`${f}.type`, type));
    seen.add(type);
    if (type === '') errs.push(fieldErrors.required(`${f}.type`));
    else for (const m of isQualifiedName(type)) errs.push(fieldErrors.invalid(`${f}.type`, type, m));
    if (!['True', 'False', 'Unknown'].includes(String(c.status))) errs.push(fieldErrors.notSupported(`${f}.status`, c.status ?? '', ['False', 'True', 'Unknown']));
    if (typeof c.lastTransitionTime !== 'string' || c.lastTransitionTime === '') errs.push(fieldErrors.required(`${f}.lastTransitionTime`, 'must be set'));
    const reason = typeof c.reason === 'string' ? c.reason : '';
    if (reason === '') errs.push(fieldErrors.required(`${f}.reason`));
    else if (!REASON.test(reason)) errs.push(fieldErrors.invalid(`${f}.reason`, reason, REASON_MESSAGE));
    else if (reason.length > 1024) errs.push(fieldErrors.tooLong(`${f}.reason`, '', 1024));
    if (typeof c.message === 'string' && c.message.length > 32768) errs.push(fieldErrors.tooLong(`${f}.message`, '', 32768));
  });
  return errs;
}

/**
 * Upstream's ValidateStorageVersionMigrationStatusUpdate: a non-negative
 * integer status.resourceVersion that does not change once set; valid
 * conditions; Succeeded and Failed not both True, Running not True beside
 * either, and neither turned back once True. Does not mutate.
 */
export function validateStorageVersionMigrationStatus(o: KubeObject, old: KubeObject): FieldError[] {
  const errs: FieldError[] = [];
  const rv = obj(o.status).resourceVersion;
  const oldRv = obj(old.status).resourceVersion;
  if (rv !== undefined && rv !== '' && !(typeof rv === 'string' && /^\d+$/.test(rv))) {
    errs.push(fieldErrors.invalid('status.resourceVersion', rv, `failed to parse resource version ${JSON.stringify(rv)}: must be a non-negative integer`));
  }
  errs.push(...validateConditions(o));
  if (typeof oldRv === 'string' && oldRv !== '' && oldRv !== rv) errs.push(fieldErrors.invalid('status.resourceVersion', rv ?? '', 'cannot be updated'));
  const list = conditions(o);
  const succeeded = hasTrueCondition(o, MIGRATION_SUCCEEDED);
  const failed = hasTrueCondition(o, MIGRATION_FAILED);
  const running = hasTrueCondition(o, MIGRATION_RUNNING);
  if (succeeded && failed) errs.push(fieldErrors.invalid('status.conditions', list, 'Both success and failed conditions cannot be true at the same time'));
  if (succeeded && running) errs.push(fieldErrors.invalid('status.conditions', list, 'Running condition cannot be true when success condition is true'));
  if (failed && running) errs.push(fieldErrors.invalid('status.conditions', list, 'Running condition cannot be true when failed condition is true'));
  if (hasTrueCondition(old, MIGRATION_SUCCEEDED) && !succeeded) errs.push(fieldErrors.invalid('status.conditions', list, 'Success condition cannot be set to false once it is true'));
  if (hasTrueCondition(old, MIGRATION_FAILED) && !failed) errs.push(fieldErrors.invalid('status.conditions', list, 'Failed condition cannot be set to false once it is true'));
  return errs;
}
