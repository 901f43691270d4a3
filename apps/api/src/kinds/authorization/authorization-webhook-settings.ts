import { type FieldError, fieldErrors, parseGoDuration } from '@plinth/apimachinery';
import { type CompiledAuthzCondition, compileAuthzConditions } from './authorization-match-conditions.js';

/** What a webhook authorizer is asked with and how its answers are kept, whoever configured it (the platform's file, a tenant's TenantAuthorizationWebhook). */
export interface WebhookSettings {
  timeoutMs: number;
  /** How long an allowed answer is kept; 0: not cached (`cacheAuthorizedRequests: false`). */
  authorizedTtlMs: number;
  /** How long a not-allowed answer is kept; 0: not cached (`cacheUnauthorizedRequests: false`). */
  unauthorizedTtlMs: number;
  subjectAccessReviewVersion: 'v1' | 'v1beta1';
  failurePolicy: 'NoOpinion' | 'Deny';
  matchConditions: CompiledAuthzCondition[];
}

const MAX_TIMEOUT_MS = 30_000;

type Raw = Record<string, unknown>;

/** Collects field errors as upstream's field.ErrorList. */
export class FieldErrorList {
  constructor(readonly list: FieldError[] = []) {}
  required(at: string, detail = ''): void {
    this.list.push(fieldErrors.required(at, detail));
  }
  invalid(at: string, value: unknown, detail: string): void {
    this.list.push(fieldErrors.invalid(at, value, detail));
  }
  notSupported(at: string, value: unknown, supported: string[]): void {
    this.list.push(fieldErrors.notSupported(at, value, supported));
  }
  duplicate(at: string, value: unknown): void {
    this.list.push(fieldErrors.duplicate(at, value));
  }
}

/** A metav1.Duration field: milliseconds, 0 when unset, undefined (error recorded) when it does not parse. */
function duration(v: unknown, at: string, errs: FieldErrorList): number | undefined {
  if (v === undefined || v === null || v === '') return 0;
  if (typeof v !== 'string') {
    errs.invalid(at, v, 'must be a duration string (e.g. "30s")');
    return undefined;
  }
  try {
    return parseGoDuration(v);
  } catch (err) {
    errs.invalid(at, v, (err as Error).message);
    return undefined;
  }
}

function durationBounds(raw: Raw, key: string, at: string, errs: FieldErrorList, maxMs?: number): number {
  const ms = duration(raw[key], `${at}.${key}`, errs);
  if (ms === undefined) return 0;
  if (ms === 0) errs.required(`${at}.${key}`);
  else if (ms < 0 || (maxMs !== undefined && ms > maxMs)) errs.invalid(`${at}.${key}`, raw[key], maxMs !== undefined ? 'must be > 0s and <= 30s' : 'must be > 0s');
  return ms;
}

/** A `*bool` cache switch, true when unset; anything but a boolean is an error (and counts as on). */
function cacheSwitch(raw: Raw, key: string, at: string, errs: FieldErrorList): boolean {
  const v = raw[key];
  if (v === undefined || v === null) return true;
  if (typeof v !== 'boolean') {
    errs.invalid(`${at}.${key}`, v, 'must be a boolean');
    return true;
  }
  return v;
}

function enumField<T extends string>(raw: Raw, key: string, at: string, allowed: readonly T[], errs: FieldErrorList, requiredDetail = ''): T | undefined {
  const v = raw[key];
  if (v === undefined || v === null || v === '') {
    errs.required(`${at}.${key}`, requiredDetail);
    return undefined;
  }
  if (!allowed.includes(v as T)) {
    errs.notSupported(`${at}.${key}`, v, [...allowed]);
    return undefined;
  }
  return v as T;
}

/**
 * Validates a webhook authorizer's settings at `at` as upstream's
 * ValidateWebhookConfiguration (timeout within (0s, 30s], both TTLs set
 * and positive, the review versions, failurePolicy, and matchConditions
 * compiled). Pushes field errors onto `errors`; returns the settings when
 * there were none. Pure.
 */
export function validateWebhookSettings(raw: Record<string, unknown>, at: string, errors: FieldError[]): WebhookSettings | undefined {
  const errs = new FieldErrorList(errors);
  const before = errs.list.length;
  const timeoutMs = durationBounds(raw, 'timeout', at, errs, MAX_TIMEOUT_MS);
  // 1.34's cacheAuthorizedRequests / cacheUnauthorizedRequests (default true): false turns that cache off, and its TTL is then not needed.
  const authorizedTtlMs = cacheSwitch(raw, 'cacheAuthorizedRequests', at, errs) ? durationBounds(raw, 'authorizedTTL', at, errs) : 0;
  const unauthorizedTtlMs = cacheSwitch(raw, 'cacheUnauthorizedRequests', at, errs) ? durationBounds(raw, 'unauthorizedTTL', at, errs) : 0;
  const subjectAccessReviewVersion = enumField(raw, 'subjectAccessReviewVersion', at, ['v1', 'v1beta1'] as const, errs);
  const conditions = Array.isArray(raw.matchConditions) ? raw.matchConditions : [];
  if (raw.matchConditions !== undefined && raw.matchConditions !== null && !Array.isArray(raw.matchConditions)) errs.invalid(`${at}.matchConditions`, raw.matchConditions, 'must be a list');
  if (raw.matchConditionSubjectAccessReviewVersion === undefined || raw.matchConditionSubjectAccessReviewVersion === '') {
    if (conditions.length > 0) errs.required(`${at}.matchConditionSubjectAccessReviewVersion`, 'required if match conditions are specified');
  } else if (raw.matchConditionSubjectAccessReviewVersion !== 'v1') {
    errs.notSupported(`${at}.matchConditionSubjectAccessReviewVersion`, raw.matchConditionSubjectAccessReviewVersion, ['v1']);
  }
  const failurePolicy = enumField(raw, 'failurePolicy', at, ['NoOpinion', 'Deny'] as const, errs);
  const matchConditions = compileAuthzConditions(conditions, at, errs.list);
  if (errs.list.length > before || !subjectAccessReviewVersion || !failurePolicy) return undefined;
  return { timeoutMs, authorizedTtlMs, unauthorizedTtlMs, subjectAccessReviewVersion, failurePolicy, matchConditions };
}

