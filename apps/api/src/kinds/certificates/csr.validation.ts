import { type FieldError, fieldErrors, isDNS1123Label, isDNS1123Subdomain, isPlainObject, type KubeObject } from '@plinth/apimachinery';
import {
  csrConditions,
  csrSpec,
  decodeBytes,
  KEY_USAGES,
  LEGACY_UNKNOWN_SIGNER,
  parseCertificateRequest,
  pemBlocks,
} from './csr-api.js';
import { X509Certificate } from 'node:crypto';

const DNS1123_SUBDOMAIN_MAX = 253;
const DNS1123_LABEL_MAX = 63;
/** What upstream shows instead of the bytes of a request or certificate. */
const REQUEST_PLACEHOLDER = '<request data>';
const CERTIFICATE_PLACEHOLDER = '<certificate data>';
/** Condition types whose removal an update may not make (upstream's list). */
const STICKY_CONDITIONS = ['Approved', 'Denied', 'Failed'];

/**
 * Upstream's ValidateSignerName: `<domain>/<path>`, the domain of at least
 * two DNS-1123 labels (at most 253 bytes), the path a DNS-1123 subdomain.
 * Pure.
 */
export function validateSignerName(field: string, signerName: unknown): FieldError[] {
  if (typeof signerName !== 'string' || signerName === '') return [fieldErrors.required(field)];
  const segments = signerName.split('/');
  if (segments.length !== 2) return [fieldErrors.invalid(field, signerName, "must be a fully qualified domain and path of the form 'example.com/signer-name'")];
  const [domain, path] = segments;
  const errs: FieldError[] = [];
  if (Buffer.byteLength(domain) > DNS1123_SUBDOMAIN_MAX) errs.push(fieldErrors.tooLong(field, domain, DNS1123_SUBDOMAIN_MAX));
  const labels = domain.split('.');
  for (const label of labels) {
    const msgs = isDNS1123Label(label);
    if (msgs.length === 0) continue;
    // One broken label is enough: the others would repeat indistinguishable messages (as upstream).
    for (const m of msgs) errs.push(fieldErrors.invalid(field, domain, `validating label "${label}": ${m}`));
    break;
  }
  if (labels.length < 2) errs.push(fieldErrors.invalid(field, domain, 'should be a domain with at least two segments separated by dots'));
  const maxPath = DNS1123_SUBDOMAIN_MAX + DNS1123_LABEL_MAX + 1;
  if (Buffer.byteLength(path) > maxPath) errs.push(fieldErrors.tooLong(field, path, maxPath));
  else for (const m of isDNS1123Subdomain(path)) errs.push(fieldErrors.invalid(field, path, `validating path "${path}": ${m}`));
  return errs;
}

/** spec.request: base64 of a PEM CERTIFICATE REQUEST whose self-signature verifies. */
async function validateRequest(request: unknown): Promise<FieldError[]> {
  const pem = decodeBytes(request);
  if (pem === undefined) return [fieldErrors.invalid('spec.request', REQUEST_PLACEHOLDER, 'must be base64-encoded PEM data')];
  try {
    await parseCertificateRequest(pem);
    return [];
  } catch (err) {
    return [fieldErrors.invalid('spec.request', REQUEST_PLACEHOLDER, (err as Error).message)];
  }
}

function validateUsages(usages: unknown): FieldError[] {
  if (!Array.isArray(usages) || usages.length === 0) return [fieldErrors.required('spec.usages', 'usages must be provided')];
  const errs: FieldError[] = [];
  const seen = new Set<unknown>();
  usages.forEach((u, i) => {
    if (!KEY_USAGES.includes(u as string)) errs.push(fieldErrors.notSupported(`spec.usages[${i}]`, u, KEY_USAGES));
    if (seen.has(u)) errs.push(fieldErrors.duplicate(`spec.usages[${i}]`, u));
    seen.add(u);
  });
  return errs;
}

/** Upstream's validateConditions: a type each, True/False/Unknown, no duplicate types, Approved and Denied only True and never both. */
function validateConditions(obj: KubeObject): FieldError[] {
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  let approved = false;
  let denied = false;
  csrConditions(obj).forEach((c, i) => {
    const at = `status.conditions[${i}]`;
    if (!c.type) errs.push(fieldErrors.required(`${at}.type`));
    if (!['True', 'False', 'Unknown'].includes(c.status)) errs.push(fieldErrors.notSupported(`${at}.status`, c.status, ['False', 'True', 'Unknown']));
    if (seen.has(c.type)) errs.push(fieldErrors.duplicate(`${at}.type`, c.type));
    seen.add(c.type);
    if (c.type === 'Approved' || c.type === 'Denied') {
      if (c.type === 'Approved') approved = true;
      else denied = true;
      if (c.status !== 'True') errs.push(fieldErrors.invalid(`${at}.status`, c.status, `${c.type} condition may only be set to True`));
    }
  });
  if (approved && denied) errs.push(fieldErrors.invalid('status.conditions', csrConditions(obj), 'Approved and Denied conditions are mutually exclusive'));
  return errs;
}

/** status.certificate, when set: base64 of PEM holding only CERTIFICATE blocks (at least one), each one parsing. */
function validateCertificate(obj: KubeObject): FieldError[] {
  const b64 = isPlainObject(obj.status) ? obj.status.certificate : undefined;
  if (b64 === undefined || b64 === null || b64 === '') return [];
  const invalid = (detail: string) => [fieldErrors.invalid('status.certificate', CERTIFICATE_PLACEHOLDER, detail)];
  const pem = decodeBytes(b64);
  if (pem === undefined) return invalid('must be base64-encoded PEM data');
  const blocks = pemBlocks(pem.toString('latin1'));
  if (blocks.length === 0) return invalid('must contain at least one CERTIFICATE PEM block');
  for (const b of blocks) {
    if (b.type !== 'CERTIFICATE') return invalid(`only CERTIFICATE PEM blocks are allowed, found "${b.type}"`);
    try {
      new X509Certificate(b.der);
    } catch (err) {
      return invalid((err as Error).message);
    }
  }
  return [];
}

/**
 * Upstream's validateCertificateSigningRequest for v1: the request parses
 * and verifies, usages are given, known and unique, the signer name is
 * well formed (and not the legacy one), expirationSeconds is at least 600,
 * the conditions are consistent, and an issued certificate is PEM.
 * Metadata is validated by the generic store. Does not mutate `obj`.
 */
export async function validateCsr(obj: KubeObject): Promise<FieldError[]> {
  const spec = csrSpec(obj);
  const errs = await validateRequest(spec.request);
  errs.push(...validateUsages(spec.usages));
  if (spec.signerName === LEGACY_UNKNOWN_SIGNER) {
    errs.push(fieldErrors.invalid('spec.signerName', spec.signerName, 'the legacy signerName is not allowed via this API version'));
  } else {
    errs.push(...validateSignerName('spec.signerName', spec.signerName));
  }
  const exp = spec.expirationSeconds;
  if (typeof exp === 'number' && exp < 600) errs.push(fieldErrors.invalid('spec.expirationSeconds', exp, 'may not specify a duration less than 600 seconds (10 minutes)'));
  errs.push(...validateConditions(obj), ...validateCertificate(obj));
  return errs;
}

/** Upstream: an update may not remove an Approved, Denied or Failed condition. Pure. */
export function validateConditionsKept(obj: KubeObject, old: KubeObject): FieldError[] {
  const count = (o: KubeObject, t: string) => csrConditions(o).filter((c) => c.type === t).length;
  return STICKY_CONDITIONS.filter((t) => count(obj, t) < count(old, t)).map((t) => fieldErrors.forbidden('status.conditions', `updates may not remove a condition of type "${t}"`));
}

/** Upstream's status update rule: an issued certificate may not be changed. Pure. */
export function validateCertificateKept(obj: KubeObject, old: KubeObject): FieldError[] {
  const before = isPlainObject(old.status) ? old.status.certificate : undefined;
  const after = isPlainObject(obj.status) ? obj.status.certificate : undefined;
  if (typeof before !== 'string' || before === '' || before === after) return [];
  return [fieldErrors.invalid('status.certificate', CERTIFICATE_PLACEHOLDER, 'updates may not modify existing certificate content')];
}
