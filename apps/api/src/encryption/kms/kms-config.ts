import { parseGoDuration } from '@plinth/apimachinery';
import type { EncryptionFieldError } from '../encryption-config.validation.js';

/** An EncryptionConfiguration's `kms` provider, decoded and defaulted as upstream does. */
export interface KmsConfiguration {
  /** `v2` (Plinth builds only KMS v2); `v1` when unset, as upstream defaults it, then refused. */
  apiVersion: string;
  name: string;
  /** Only KMS v1 had a cache size; set for v2 it is an error. */
  cachesize?: number;
  /** `unix:///path/to/socket`. */
  endpoint: string;
  /** Per-call deadline in milliseconds (upstream's default: 3s). */
  timeoutMs: number;
  /** The timeout as written (for messages). */
  timeout: string;
}

const KNOWN = ['apiVersion', 'name', 'cachesize', 'endpoint', 'timeout'];

/**
 * Decodes a `kms` provider entry strictly (unknown fields are errors) with
 * upstream's defaults: apiVersion `v1` when unset, timeout 3s. Throws an
 * Error with a decoding message.
 */
export function decodeKmsConfiguration(o: Record<string, unknown>, path: string): KmsConfiguration {
  for (const k of Object.keys(o)) if (!KNOWN.includes(k)) throw new Error(`strict decoding error: unknown field "${path}.${k}"`);
  const str = (k: string): string => {
    const v = o[k];
    if (v === undefined || v === null) return '';
    if (typeof v !== 'string') throw new Error(`json: cannot unmarshal ${typeof v} into Go struct field ${path}.${k} of type string`);
    return v;
  };
  let cachesize: number | undefined;
  if (o.cachesize !== undefined && o.cachesize !== null) {
    if (typeof o.cachesize !== 'number' || !Number.isInteger(o.cachesize)) throw new Error(`json: cannot unmarshal ${typeof o.cachesize} into Go struct field ${path}.cachesize of type int32`);
    cachesize = o.cachesize;
  }
  const timeout = str('timeout') || '3s';
  return { apiVersion: str('apiVersion') || 'v1', name: str('name'), cachesize, endpoint: str('endpoint'), timeout, timeoutMs: parseGoDuration(timeout) };
}

/**
 * Validates one kms provider as upstream's validateKMSConfiguration does,
 * with its paths and messages; `names` collects the names seen so far
 * (KMS v2 names must be unique across the file). Pure apart from `names`.
 */
export function validateKmsConfiguration(c: KmsConfiguration, path: string, names: Set<string>): EncryptionFieldError[] {
  const out: EncryptionFieldError[] = [];
  const q = (s: string) => JSON.stringify(s);
  if (c.name === '') out.push({ field: `${path}.name`, type: 'Required value', detail: 'name is a mandatory field for a provider' });
  if (c.apiVersion !== 'v1' && c.name.includes(':')) {
    out.push({ field: `${path}.name`, type: 'Invalid value', value: q(c.name), detail: `invalid KMS provider name ${c.name}, must not contain ':'` });
  }
  if (c.apiVersion !== 'v1' && names.has(c.name)) {
    out.push({ field: `${path}.name`, type: 'Invalid value', value: q(c.name), detail: `duplicate KMS provider name ${c.name}, names must be unique` });
  }
  names.add(c.name);
  if (c.timeoutMs <= 0) out.push({ field: `${path}.timeout`, type: 'Invalid value', value: c.timeout, detail: 'timeout should be a positive value' });
  out.push(...validateEndpoint(c.endpoint, `${path}.endpoint`));
  if (c.apiVersion !== 'v1' && c.cachesize !== undefined) {
    out.push({ field: `${path}.cachesize`, type: 'Invalid value', value: String(c.cachesize), detail: 'cachesize is not supported in v2' });
  }
  if (c.apiVersion !== 'v1' && c.apiVersion !== 'v2') {
    out.push({ field: `${path}.apiVersion`, type: 'Invalid value', value: q(c.apiVersion), detail: 'unsupported apiVersion apiVersion for KMS provider, only v1 and v2 are supported' });
  }
  return out;
}

function validateEndpoint(endpoint: string, path: string): EncryptionFieldError[] {
  if (endpoint === '') return [{ field: path, type: 'Invalid value', value: '""', detail: 'endpoint is a mandatory field for a kms' }];
  let u: URL;
  try {
    u = new URL(endpoint);
  } catch (err) {
    return [{ field: path, type: 'Invalid value', value: JSON.stringify(endpoint), detail: `invalid endpoint for kms provider, error: ${(err as Error).message}` }];
  }
  const scheme = u.protocol.replace(/:$/, '');
  if (scheme !== 'unix') return [{ field: path, type: 'Invalid value', value: JSON.stringify(endpoint), detail: `unsupported scheme ${JSON.stringify(scheme)} for KMS provider, only unix is supported` }];
  return [];
}

/** Upstream's refusal of KMS v1 (deprecated; Plinth has no feature gate to turn it back on). */
export const KMS_V1_REFUSED = 'KMSv1 is deprecated and will only receive security updates going forward. Use KMSv2 instead. Plinth does not build KMSv1 providers.';

/** The socket path of a validated `unix://` endpoint (`unix:///run/kms.sock` and `unix://@abstract` alike). */
export function socketPath(endpoint: string): string {
  const u = new URL(endpoint);
  return decodeURIComponent(u.host ? `${u.host}${u.pathname}` : u.pathname);
}
