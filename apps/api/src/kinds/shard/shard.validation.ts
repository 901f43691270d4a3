import { byteLength, type FieldError, fieldErrors, isConfigMapKey, isDNS1123Label, isDNS1123Subdomain, isPlainObject, type KubeObject, validateConditions } from '@plinth/apimachinery';
import { DEFAULT_SHARD } from './shard-api.js';

/** The longest `status.host` (a host name of 253 bytes, a port and a database name of 63 fit with room). */
export const MAX_SHARD_HOST_LENGTH = 512;

// Control characters would garble logs and tables; '@' would mean a user (and maybe a password) leaked into status.
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f]/;

function nameErrors(path: string, value: unknown, check: (v: string) => string[]): FieldError[] {
  if (value === undefined || value === null || value === '') return [fieldErrors.required(path)];
  if (typeof value !== 'string') return [fieldErrors.typeInvalid(path, value, 'must be a string')];
  return check(value).map((d) => fieldErrors.invalid(path, value, d));
}

function validateSecretRef(ref: unknown, isDefault: boolean): FieldError[] {
  const path = 'spec.secretRef';
  if (isDefault) {
    return ref === undefined || ref === null ? [] : [fieldErrors.forbidden(path, 'the default shard is the platform\'s own database: its connection comes from the server\'s configuration')];
  }
  if (ref === undefined || ref === null) return [fieldErrors.required(path, 'a shard needs the Secret that holds its connection URL')];
  if (!isPlainObject(ref)) return [fieldErrors.typeInvalid(path, ref, 'must be an object')];
  const errs = [...nameErrors(`${path}.name`, ref.name, isDNS1123Subdomain), ...nameErrors(`${path}.namespace`, ref.namespace, isDNS1123Label)];
  // An absent or empty key is defaulted before validation; a present one must be a key a Secret can have.
  if (ref.key !== undefined && ref.key !== null && ref.key !== '') errs.push(...nameErrors(`${path}.key`, ref.key, isConfigMapKey));
  if (ref.readReplicaKey !== undefined && ref.readReplicaKey !== null && ref.readReplicaKey !== '') errs.push(...nameErrors(`${path}.readReplicaKey`, ref.readReplicaKey, isConfigMapKey));
  return errs;
}

/**
 * Kind-specific checks of a Shard's spec (the generic ObjectMeta checks,
 * with its name a DNS-1123 label, are the caller's): `spec.secretRef`
 * names a Secret (name a DNS-1123 subdomain, namespace a label, key a
 * Secret key) on every shard but `default`, which must not have one;
 * `spec.unschedulable` is a boolean. Pure; [] when valid.
 */
export function validateShard(obj: KubeObject): FieldError[] {
  const isDefault = obj.metadata.name === DEFAULT_SHARD;
  const spec = obj.spec ?? {};
  if (!isPlainObject(spec)) return [fieldErrors.typeInvalid('spec', spec, 'must be an object')];
  const errs = validateSecretRef(spec.secretRef, isDefault);
  const u = spec.unschedulable;
  if (u !== undefined && u !== null && typeof u !== 'boolean') errs.push(fieldErrors.typeInvalid('spec.unschedulable', u, 'must be a boolean'));
  return errs;
}

/**
 * The checks of a client's create: {@link validateShard}, except that the
 * name `default` is refused (it is the platform's own database, which the
 * platform registers itself) with that one error, since rules of the
 * default shard's spec would only mislead. Pure; [] when valid.
 */
export function validateShardCreate(obj: KubeObject): FieldError[] {
  if (obj.metadata.name === DEFAULT_SHARD) return [fieldErrors.invalid('metadata.name', DEFAULT_SHARD, 'is reserved for the platform\'s own database')];
  return validateShard(obj);
}

function countErrors(status: Record<string, unknown>, key: string): FieldError[] {
  const v = status[key];
  if (v === undefined || v === null) return [];
  if (typeof v !== 'number' || !Number.isSafeInteger(v)) return [fieldErrors.typeInvalid(`status.${key}`, v, 'must be an integer')];
  return v < 0 ? [fieldErrors.invalid(`status.${key}`, v, 'must be greater than or equal to 0')] : [];
}

function hostErrors(host: unknown): FieldError[] {
  if (host === undefined || host === null) return [];
  if (typeof host !== 'string') return [fieldErrors.typeInvalid('status.host', host, 'must be a string')];
  if (byteLength(host) > MAX_SHARD_HOST_LENGTH) return [fieldErrors.tooLong('status.host', '', MAX_SHARD_HOST_LENGTH)];
  if (CONTROL_CHARACTER.test(host)) return [fieldErrors.invalid('status.host', host, 'must not contain control characters')];
  // Not echoed: a value with '@' may carry a password.
  if (host.includes('@')) return [fieldErrors.invalid('status.host', '', 'must be host:port/database, without user or password')];
  return [];
}

/**
 * The checks of a write to shards/status: counts that are whole and not
 * negative, conditions as metav1 validates them, and a host of at most
 * {@link MAX_SHARD_HOST_LENGTH} bytes with no user part (so no password can
 * be reported there). Pure; [] when valid.
 */
export function validateShardStatus(obj: KubeObject): FieldError[] {
  const status = obj.status;
  if (status === undefined || status === null) return [];
  if (!isPlainObject(status)) return [fieldErrors.typeInvalid('status', status, 'must be an object')];
  return [
    ...validateConditions(status.conditions, 'status.conditions'),
    ...['tenants', 'objects', 'bytes', 'observedGeneration'].flatMap((k) => countErrors(status, k)),
    ...hostErrors(status.host),
  ];
}
