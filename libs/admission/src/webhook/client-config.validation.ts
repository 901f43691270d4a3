import { type FieldError, fieldErrors, isDNS1123Subdomain, isPlainObject } from '@plinth/apimachinery';

/**
 * Validation of a webhook's `clientConfig`, as k8s.io/apiserver's
 * pkg/util/webhook (ValidateWebhookURL, ValidateWebhookService): shared by
 * admission webhook configurations and CRD conversion webhooks. Pure.
 */

const URL_FORM = '; desired format: https://host[/path]';

/** Go's url.Parse split (RFC 3986 appendix B), enough for ValidateWebhookURL. */
function splitUrl(url: string): { scheme: string; host: string; user?: string; query: string; fragment: string } {
  const m = /^(?:([a-zA-Z][a-zA-Z0-9+.-]*):)?(?:\/\/([^/?#]*))?([^?#]*)(?:\?([^#]*))?(?:#(.*))?$/.exec(url) ?? [];
  const authority = m[2] ?? '';
  const at = authority.lastIndexOf('@');
  return {
    scheme: (m[1] ?? '').toLowerCase(),
    host: at >= 0 ? authority.slice(at + 1) : authority,
    user: at >= 0 ? authority.slice(0, at) : undefined,
    query: m[4] ?? '',
    fragment: m[5] ?? '',
  };
}

/** webhook.ValidateWebhookURL with forceHttps: https only, a host, no user information, query or fragment. */
export function validateWebhookUrl(url: string, field: string): FieldError[] {
  const errs: FieldError[] = [];
  const u = splitUrl(url);
  if (u.scheme !== 'https') errs.push(fieldErrors.invalid(field, u.scheme, `'https' is the only allowed URL scheme${URL_FORM}`));
  if (u.host.length === 0) errs.push(fieldErrors.invalid(field, u.host, `host must be provided${URL_FORM}`));
  if (u.user !== undefined) errs.push(fieldErrors.invalid(field, u.user, 'user information is not permitted in the URL'));
  if (u.fragment.length !== 0) errs.push(fieldErrors.invalid(field, u.fragment, 'fragments are not permitted in the URL'));
  if (u.query.length !== 0) errs.push(fieldErrors.invalid(field, u.query, 'query parameters are not permitted in the URL'));
  return errs;
}

/** webhook.ValidateWebhookService: name, namespace, port 1-65535 (default 443), path of DNS-1123 subdomain segments. */
export function validateWebhookService(svc: Record<string, unknown>, field: string): FieldError[] {
  const errs: FieldError[] = [];
  if (!svc.name) errs.push(fieldErrors.required(`${field}.name`, 'service name is required'));
  if (!svc.namespace) errs.push(fieldErrors.required(`${field}.namespace`, 'service namespace is required'));
  const port = typeof svc.port === 'number' ? svc.port : 443;
  if (port < 1 || port > 65535) errs.push(fieldErrors.invalid(`${field}.port`, port, 'port is not valid: must be between 1 and 65535, inclusive'));
  const path = typeof svc.path === 'string' ? svc.path : undefined;
  if (path === undefined || path === '' || path === '/') return errs;
  if (path === '//') return [...errs, fieldErrors.invalid(`${field}.path`, path, 'segment[0] may not be empty')];
  if (!path.startsWith('/')) errs.push(fieldErrors.invalid(`${field}.path`, path, "must start with a '/'"));
  let rest = path.slice(1);
  if (rest.endsWith('/')) rest = rest.slice(0, -1);
  rest.split('/').forEach((step, i) => {
    if (step.length === 0) {
      errs.push(fieldErrors.invalid(`${field}.path`, path, `segment[${i}] may not be empty`));
      return;
    }
    for (const f of isDNS1123Subdomain(step)) errs.push(fieldErrors.invalid(`${field}.path`, path, `segment[${i}]: ${f}`));
  });
  return errs;
}

/** Exactly one of `url` or `service`, each validated as upstream; `field` is the clientConfig's path. */
export function validateWebhookClientConfig(cc: unknown, field: string): FieldError[] {
  const c = isPlainObject(cc) ? cc : {};
  const hasUrl = c.url !== undefined && c.url !== null;
  const hasService = c.service !== undefined && c.service !== null;
  if (hasUrl === hasService) return [fieldErrors.required(field, 'exactly one of url or service is required')];
  if (hasUrl) return validateWebhookUrl(String(c.url), `${field}.url`);
  return validateWebhookService(isPlainObject(c.service) ? c.service : {}, `${field}.service`);
}

