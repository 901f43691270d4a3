import type { EncryptionConfiguration, EncryptionKey, ProviderConfiguration } from './encryption-config.parser.js';
import { validateKmsConfiguration } from './kms/kms-config.js';

/** One field error, formatted as k8s.io/apimachinery's field.Error. */
export interface EncryptionFieldError {
  field: string;
  type: 'Required value' | 'Invalid value' | 'Forbidden';
  /** The bad value as Go's %q / %#v prints it; undefined for Required and Forbidden. */
  value?: string;
  detail: string;
}

/** `field: Type: value: detail`, as field.Error.Error() writes it. */
export function formatFieldError(e: EncryptionFieldError): string {
  return `${e.field}: ${e.type}${e.value !== undefined ? `: ${e.value}` : ''}: ${e.detail}`;
}

// Upstream's messages (k8s.io/apiserver/pkg/apis/apiserver/validation/validation_encryption.go).
const moreThanOneElementErr = 'more than one provider specified in a single element, should split into different list elements';
const noProviderErr = 'provider does not contain any of the expected providers: KMS, AESGCM, AESCBC, Secretbox, Identity';
const eventsGroupErr = "'*.events.k8s.io' objects are stored using the 'events' API group in etcd. Use 'events' instead in the config file";
const extensionsGroupErr = "'extensions' group has been removed and cannot be used for encryption";
const starResourceErr = "use '*.' to encrypt all the resources from core API group or *.* to encrypt all resources";
const overlapErr = "using overlapping resources such as 'secrets' and '*.' in the same resource list is not allowed as they will be masked";
const nonRESTAPIResourceErr = 'resources which do not have REST API/s cannot be encrypted';
const resourceNameErr = 'resource name should not contain capital letters';
const resourceAcrossGroupErr = 'encrypting the same resource across groups is not supported';
const duplicateResourceErr = 'the same resource cannot be specified multiple times';
const base64EncodingErr = 'secrets must be base64 encoded';

const AES_KEY_SIZES = [16, 24, 32];
const SECRETBOX_KEY_SIZES = [32];

/** Go's %q of a string. */
function quote(s: string): string {
  return JSON.stringify(s);
}

/** Go's %#v of a []string. */
function goStrings(values: string[]): string {
  return `[]string{${values.map(quote).join(', ')}}`;
}

/** A group/resource as schema.ParseGroupResource reads it: resource before the first dot, group after. */
export function parseGroupResource(s: string): { group: string; resource: string } {
  const dot = s.indexOf('.');
  return dot < 0 ? { group: '', resource: s } : { group: s.slice(dot + 1), resource: s.slice(0, dot) };
}

function validateResourceOverlap(resources: string[], path: string): EncryptionFieldError[] {
  if (resources.length < 2) return [];
  const grs = resources.map(parseGroupResource);
  let overlap = false;
  let duplicate = false;
  for (const [i, a] of grs.entries()) {
    for (const [j, b] of grs.entries()) {
      if (i === j) continue;
      if (a.group === b.group && a.resource === b.resource) {
        duplicate = true;
        continue;
      }
      if (a.group === '*' && a.resource === '*') overlap = true;
      else if (a.group === b.group && (a.resource === '*' || b.resource === '*')) overlap = true;
    }
  }
  const out: EncryptionFieldError[] = [];
  if (duplicate) out.push({ field: path, type: 'Invalid value', value: goStrings(resources), detail: duplicateResourceErr });
  if (overlap) out.push({ field: path, type: 'Invalid value', value: goStrings(resources), detail: overlapErr });
  return out;
}

function resourceNameError(res: string): string | undefined {
  if (res.toLowerCase() !== res) return resourceNameErr;
  if (res === '*') return starResourceErr;
  if (res === 'apiserveripinfo' || res === 'serviceipallocations' || res === 'servicenodeportallocations') return nonRESTAPIResourceErr;
  const gr = parseGroupResource(res);
  if (gr.group === 'events.k8s.io') return eventsGroupErr;
  if (gr.group === 'extensions') return extensionsGroupErr;
  if (gr.group === '*' && gr.resource !== '*') return resourceAcrossGroupErr;
  return undefined;
}

function validateKeys(keys: EncryptionKey[], path: string, sizes: number[]): EncryptionFieldError[] {
  if (keys.length === 0) return [{ field: path, type: 'Required value', detail: 'at least one keys is required' }];
  const out: EncryptionFieldError[] = [];
  keys.forEach((key, i) => {
    const p = `${path}[${i}]`;
    if (key.name === '') out.push({ field: `${p}.name`, type: 'Required value', detail: 'name is a mandatory field for a key' });
    if (key.secret === '') {
      out.push({ field: `${p}.secret`, type: 'Required value', detail: 'secret is a mandatory field for a key' });
      return;
    }
    // Go's base64.StdEncoding: padded, standard alphabet, nothing else.
    if (!/^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(key.secret)) {
      out.push({ field: `${p}.secret`, type: 'Invalid value', value: '"REDACTED"', detail: base64EncodingErr });
      return;
    }
    const n = Buffer.from(key.secret, 'base64').length;
    if (!sizes.includes(n)) {
      out.push({ field: `${p}.secret`, type: 'Invalid value', value: '"REDACTED"', detail: `secret is not of the expected length, got ${n}, expected one of [${sizes.join(' ')}]` });
    }
  });
  return out;
}

function validateProvider(provider: ProviderConfiguration, path: string, kmsNames: Set<string>): EncryptionFieldError[] {
  const set = (['kms', 'aesgcm', 'aescbc', 'secretbox', 'identity'] as const).filter((k) => provider[k] !== undefined);
  const shown = JSON.stringify(provider);
  if (set.length === 0) return [{ field: path, type: 'Invalid value', value: shown, detail: noProviderErr }];
  if (set.length > 1) return [{ field: path, type: 'Invalid value', value: shown, detail: moreThanOneElementErr }];
  if (provider.kms) return validateKmsConfiguration(provider.kms, `${path}.kms`, kmsNames);
  if (provider.aesgcm) return validateKeys(provider.aesgcm.keys, `${path}.aesgcm.keys`, AES_KEY_SIZES);
  if (provider.aescbc) return validateKeys(provider.aescbc.keys, `${path}.aescbc.keys`, AES_KEY_SIZES);
  if (provider.secretbox) return validateKeys(provider.secretbox.keys, `${path}.secretbox.keys`, SECRETBOX_KEY_SIZES);
  return [];
}

/**
 * Validates a decoded EncryptionConfiguration as upstream's
 * ValidateEncryptionConfiguration does, with its paths and messages
 * (KMS v1 passes here and is refused when building, as upstream does).
 * Returns every error, none when valid. Pure.
 */
export function validateEncryptionConfiguration(c: EncryptionConfiguration): EncryptionFieldError[] {
  if (c.resources.length === 0) return [{ field: 'resources', type: 'Required value', detail: 'at least one resources is required' }];
  const out: EncryptionFieldError[] = [];
  const kmsNames = new Set<string>();
  c.resources.forEach((conf, i) => {
    const r = `resources[${i}].resources`;
    const p = `resources[${i}].providers`;
    if (conf.resources.length === 0) out.push({ field: r, type: 'Required value', detail: `at least one ${r} is required` });
    out.push(...validateResourceOverlap(conf.resources, r));
    conf.resources.forEach((res, j) => {
      const detail = resourceNameError(res);
      if (detail) out.push({ field: `${r}[${j}]`, type: 'Invalid value', value: quote(res), detail });
    });
    if (conf.providers.length === 0) out.push({ field: p, type: 'Required value', detail: `at least one ${p} is required` });
    conf.providers.forEach((provider, j) => out.push(...validateProvider(provider, `${p}[${j}]`, kmsNames)));
  });
  return out;
}

/** Upstream's ErrorList.ToAggregate().Error(): one error as it is, several as `[a, b]`, repeats once. */
export function aggregateFieldErrors(errors: EncryptionFieldError[]): string {
  const msgs = [...new Set(errors.map(formatFieldError))];
  return msgs.length === 1 ? msgs[0] : `[${msgs.join(', ')}]`;
}
