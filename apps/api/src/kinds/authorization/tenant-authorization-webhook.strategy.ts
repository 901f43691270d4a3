import { validateWebhookUrl } from '@plinth/admission';
import { type FieldError, fieldErrors, isPlainObject, type KubeObject } from '@plinth/apimachinery';
import type { ResourceStrategy } from '../../registry/resource-definition.js';
import { validateWebhookSettings } from './authorization-webhook-settings.js';

/** Defaults of a TenantAuthorizationWebhook (upstream's flag defaults for the TTLs; the admission webhooks' 10 s timeout). */
const DEFAULTS: Record<string, string> = {
  timeout: '10s',
  authorizedTTL: '5m',
  unauthorizedTTL: '30s',
  subjectAccessReviewVersion: 'v1',
  failurePolicy: 'NoOpinion',
};

/** Fills the unset settings of `obj.spec` (and the match conditions' review version when there are conditions). Mutates `obj`. */
function defaultSpec(obj: KubeObject): void {
  if (!isPlainObject(obj.spec)) return;
  const spec = obj.spec;
  for (const [k, v] of Object.entries(DEFAULTS)) if (spec[k] === undefined || spec[k] === null || spec[k] === '') spec[k] = v;
  if (Array.isArray(spec.matchConditions) && spec.matchConditions.length > 0 && !spec.matchConditionSubjectAccessReviewVersion) spec.matchConditionSubjectAccessReviewVersion = 'v1';
}

/** The PEM a `caBundle` holds, or an error. */
function validateCaBundle(ca: unknown, field: string): FieldError[] {
  if (ca === undefined || ca === null || ca === '') return [];
  if (typeof ca !== 'string') return [fieldErrors.invalid(field, ca, 'must be base64 of a PEM bundle')];
  const pem = Buffer.from(ca, 'base64').toString('utf8');
  return pem.includes('-----BEGIN CERTIFICATE-----') ? [] : [fieldErrors.invalid(field, '<omitted>', 'must be base64 of a PEM bundle of certificates')];
}

/**
 * A TenantAuthorizationWebhook: `spec.clientConfig.url` (https, no user,
 * query or fragment, as admission webhooks' URLs) and its CA bundle, and
 * the settings of upstream's webhook authorizer (ValidateWebhookConfiguration:
 * timeout, TTLs, review versions, failurePolicy, matchConditions compiled). Pure.
 */
export function validateTenantAuthorizationWebhook(obj: KubeObject): FieldError[] {
  const spec = isPlainObject(obj.spec) ? obj.spec : undefined;
  if (!spec) return [fieldErrors.required('spec')];
  const errs: FieldError[] = [];
  const cc = isPlainObject(spec.clientConfig) ? spec.clientConfig : undefined;
  if (!cc) errs.push(fieldErrors.required('spec.clientConfig'));
  else {
    if (typeof cc.url !== 'string' || cc.url === '') errs.push(fieldErrors.required('spec.clientConfig.url'));
    else errs.push(...validateWebhookUrl(cc.url, 'spec.clientConfig.url'));
    errs.push(...validateCaBundle(cc.caBundle, 'spec.clientConfig.caBundle'));
  }
  validateWebhookSettings(spec, 'spec', errs);
  return errs;
}

/** authorization.plinth.dev/v1alpha1 TenantAuthorizationWebhook: defaults, then validation on create and update. */
export const tenantAuthorizationWebhookStrategy: ResourceStrategy = {
  prepareForCreate: (obj) => defaultSpec(obj),
  prepareForUpdate: (obj) => defaultSpec(obj),
  validate: (obj) => validateTenantAuthorizationWebhook(obj),
  validateUpdate: (obj) => validateTenantAuthorizationWebhook(obj),
  allowCreateOnUpdate: false,
  allowUnconditionalUpdate: true,
};
