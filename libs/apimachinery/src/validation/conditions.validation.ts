import { type FieldError, fieldErrors } from '../errors/field-error.js';
import { isPlainObject } from '../object/kube-object.js';
import { byteLength, isQualifiedName, isValidConditionReason } from './name-validation.js';

const CONDITION_STATUSES = ['False', 'True', 'Unknown'];
const MAX_REASON_BYTES = 1024;
const MAX_MESSAGE_BYTES = 32 * 1024;

function text(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

/** One metav1.Condition at `field` (metav1validation.ValidateCondition). */
function validateCondition(c: Record<string, unknown>, field: string): FieldError[] {
  const errs: FieldError[] = [];
  const type = text(c.type);
  for (const m of isQualifiedName(type)) errs.push(fieldErrors.invalid(`${field}.type`, type, m));
  if (!CONDITION_STATUSES.includes(text(c.status))) errs.push(fieldErrors.notSupported(`${field}.status`, c.status ?? '', CONDITION_STATUSES));
  if (typeof c.observedGeneration === 'number' && c.observedGeneration < 0) {
    errs.push(fieldErrors.invalid(`${field}.observedGeneration`, c.observedGeneration, 'must be greater than or equal to zero'));
  }
  if (!text(c.lastTransitionTime)) errs.push(fieldErrors.required(`${field}.lastTransitionTime`, 'must be set'));
  const reason = text(c.reason);
  if (reason === '') errs.push(fieldErrors.required(`${field}.reason`, 'must be set'));
  else {
    for (const m of isValidConditionReason(reason)) errs.push(fieldErrors.invalid(`${field}.reason`, reason, m));
    if (byteLength(reason) > MAX_REASON_BYTES) errs.push(fieldErrors.tooLong(`${field}.reason`, reason, MAX_REASON_BYTES));
  }
  if (byteLength(text(c.message)) > MAX_MESSAGE_BYTES) errs.push(fieldErrors.tooLong(`${field}.message`, c.message, MAX_MESSAGE_BYTES));
  return errs;
}

/**
 * A list of metav1.Conditions (metav1validation.ValidateConditions): each
 * condition's type, status, lastTransitionTime and reason, and no type
 * twice. Returns an empty list for anything but an array. Pure.
 */
export function validateConditions(conditions: unknown, field: string): FieldError[] {
  if (!Array.isArray(conditions)) return [];
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  conditions.forEach((c, i) => {
    const cond = isPlainObject(c) ? c : {};
    const type = text(cond.type);
    if (seen.has(type)) errs.push(fieldErrors.duplicate(`${field}[${i}].type`, type));
    seen.add(type);
    errs.push(...validateCondition(cond, `${field}[${i}]`));
  });
  return errs;
}
