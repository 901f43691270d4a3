import type { AdmissionAttributes } from '../admission-attributes.js';
import { AdmissionError, type AdmissionErrorStatus } from '../admission-error.js';

/** Why a call failed (a metrics label). */
export type CallFailureKind = 'timeout' | 'transport' | 'response' | 'config';

/**
 * A failure to call a webhook — transport error, timeout, unusable
 * response, unresolvable service — as upstream's ErrCallingWebhook. The
 * webhook's failurePolicy decides: Fail turns it into
 * `Internal error occurred: failed calling webhook "x": …`, Ignore skips it.
 */
export class WebhookCallError extends Error {
  constructor(
    readonly webhookName: string,
    readonly reason: string,
    readonly kind: CallFailureKind,
  ) {
    super(`failed calling webhook "${webhookName}": ${reason}`);
  }

  /** The 500 the client gets under failurePolicy Fail. */
  toAdmissionError(): AdmissionError {
    return AdmissionError.internal(this.message);
  }
}

/** The `status` of an AdmissionResponse, as the webhook sent it. */
export interface WebhookResultStatus {
  code?: number;
  reason?: string;
  message?: string;
  status?: string;
  details?: AdmissionErrorStatus['details'];
}

/** `configmaps` or `widgets.example.com`, as upstream's GroupResource.String(). */
function groupResource(attrs: AdmissionAttributes): string {
  return attrs.resource.group ? `${attrs.resource.resource}.${attrs.resource.group}` : attrs.resource.resource;
}

/**
 * The error a denial (`allowed: false`) becomes, as upstream's ToStatusErr:
 * code from the result (default 403); message `<resource> "<name>" is
 * forbidden: admission webhook "<hook>" denied the request: <message>`
 * (`Internal error occurred: …` for code 500, `…without explanation` when
 * the result has neither message nor reason); reason Forbidden (InternalError
 * for 500) unless given; details {group, kind: resource, name|"Unknown"}
 * unless given.
 */
export function webhookRejection(attrs: AdmissionAttributes, webhookName: string, result: WebhookResultStatus | null | undefined): AdmissionError {
  const r = result ?? {};
  const code = typeof r.code === 'number' && r.code !== 0 ? r.code : 403;
  const name = attrs.name || 'Unknown';
  const deniedBy = `admission webhook "${webhookName}" denied the request`;
  let text: string;
  if (r.message) text = `${deniedBy}: ${r.message}`;
  else if (r.reason) text = `${deniedBy}: ${r.reason}`;
  else text = `${deniedBy} without explanation`;
  const details =
    r.details ?? (code === 500 ? { causes: [{ message: text }] } : { group: attrs.resource.group || undefined, kind: attrs.resource.resource, name });
  const prefix = code === 500 ? 'Internal error occurred' : `${groupResource(attrs)} "${name}" is forbidden`;
  return new AdmissionError({
    code,
    reason: r.reason || (code === 500 ? 'InternalError' : 'Forbidden'),
    message: `${prefix}: ${text}`,
    details,
  });
}

/** upstream's NewDryRunUnsupportedErr: 400 `admission webhook "x" does not support dry run`. */
export function dryRunUnsupported(webhookName: string): AdmissionError {
  return AdmissionError.badRequest(`admission webhook "${webhookName}" does not support dry run`);
}

/** upstream's NewForbidden(resource, name, err) for failed matchConditions under failurePolicy Fail. */
export function matchConditionFailure(attrs: AdmissionAttributes, errors: string[]): AdmissionError {
  const detail = errors.length === 1 ? errors[0] : `[${errors.join(', ')}]`;
  return AdmissionError.forbidden(attrs.resource.group, attrs.resource.resource, attrs.name, detail);
}
