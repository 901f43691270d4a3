import { Quantity } from '@plinth/apimachinery';
import { type FieldError, fieldErrors } from '@plinth/apimachinery';
import { isPlainObject, type KubeObject } from '@plinth/apimachinery';
import { isDNS1123Label, isDNS1123Subdomain } from '@plinth/apimachinery';
import { CronExpressionParser } from 'cron-parser';

/** Names no Tenant may take: `root` is kcp's name of the platform scope, kept free for that alias. */
export const RESERVED_TENANT_NAMES = new Set(['root']);
/** The most owners one Tenant may list. */
export const MAX_OWNERS = 100;
/** The longest owner name (user names may be e-mail addresses or `system:serviceaccount:…`). */
export const MAX_OWNER_NAME_LENGTH = 1024;
/** The most entries of `spec.limits.objectsPerResource`. */
export const MAX_PER_RESOURCE_LIMITS = 256;

const OWNER_KINDS = ['User', 'Group'];
const INT32_MAX = 2 ** 31 - 1;
const INT64_MAX = (1n << 63n) - 1n;
// Control characters have no place in an identity and would garble logs and messages.
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f]/;

function validateOwners(owners: unknown): FieldError[] {
  if (owners === undefined || owners === null) return [];
  if (!Array.isArray(owners)) return [fieldErrors.typeInvalid('spec.owners', owners, 'must be a list')];
  if (owners.length > MAX_OWNERS) return [fieldErrors.tooMany('spec.owners', owners.length, MAX_OWNERS)];
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  owners.forEach((o, i) => {
    const path = `spec.owners[${i}]`;
    if (!isPlainObject(o)) {
      errs.push(fieldErrors.required(path, 'an owner needs a kind and a name'));
      return;
    }
    if (o.kind === undefined || o.kind === '') errs.push(fieldErrors.required(`${path}.kind`));
    else if (typeof o.kind !== 'string' || !OWNER_KINDS.includes(o.kind)) errs.push(fieldErrors.notSupported(`${path}.kind`, o.kind, OWNER_KINDS));
    if (o.name === undefined || o.name === '') errs.push(fieldErrors.required(`${path}.name`));
    else if (typeof o.name !== 'string') errs.push(fieldErrors.typeInvalid(`${path}.name`, o.name, 'must be a string'));
    else if (o.name.length > MAX_OWNER_NAME_LENGTH) errs.push(fieldErrors.tooLong(`${path}.name`, '', MAX_OWNER_NAME_LENGTH));
    else if (CONTROL_CHARACTER.test(o.name)) errs.push(fieldErrors.invalid(`${path}.name`, o.name, 'must not contain control characters'));
    const key = `${String(o.kind)}\u0000${String(o.name)}`;
    if (seen.has(key)) errs.push(fieldErrors.duplicate(path, { kind: o.kind, name: o.name }));
    seen.add(key);
  });
  return errs;
}

function validateCount(value: unknown, path: string, min: number, max: number): FieldError[] {
  if (value === undefined || value === null) return [];
  if (typeof value !== 'number' || !Number.isInteger(value)) return [fieldErrors.typeInvalid(path, value, 'must be an integer')];
  if (value < min) return [fieldErrors.invalid(path, value, `must be greater than or equal to ${min}`)];
  if (value > max) return [fieldErrors.invalid(path, value, `must be less than or equal to ${max}`)];
  return [];
}

function validateBytes(value: unknown): FieldError[] {
  const path = 'spec.limits.bytes';
  if (value === undefined || value === null) return [];
  if (typeof value === 'number') return validateCount(value, path, 0, Number.MAX_SAFE_INTEGER);
  if (typeof value !== 'string') return [fieldErrors.typeInvalid(path, value, 'must be a quantity')];
  let q: Quantity;
  try {
    q = Quantity.parse(value);
  } catch (err) {
    return [fieldErrors.invalid(path, value, (err as Error).message)];
  }
  if (q.num < 0n) return [fieldErrors.invalid(path, value, 'must be greater than or equal to 0')];
  if (q.den !== 1n) return [fieldErrors.invalid(path, value, 'must be a whole number of bytes')];
  if (q.num > INT64_MAX) return [fieldErrors.invalid(path, value, 'must be less than or equal to 8Ei')];
  return [];
}

function validatePerResource(value: unknown): FieldError[] {
  const path = 'spec.limits.objectsPerResource';
  if (value === undefined || value === null) return [];
  if (!isPlainObject(value)) return [fieldErrors.typeInvalid(path, value, 'must be a map of resource to count')];
  const entries = Object.entries(value);
  if (entries.length > MAX_PER_RESOURCE_LIMITS) return [fieldErrors.tooMany(path, entries.length, MAX_PER_RESOURCE_LIMITS)];
  return entries.flatMap(([resource, n]) => [
    ...isDNS1123Subdomain(resource).map((d) => fieldErrors.invalid(path, resource, `a key must be "<resource>" or "<resource>.<group>": ${d}`)),
    ...validateCount(n, `${path}[${resource}]`, 0, Number.MAX_SAFE_INTEGER),
  ]);
}

function validateLimits(limits: unknown): FieldError[] {
  if (limits === undefined || limits === null) return [];
  if (!isPlainObject(limits)) return [fieldErrors.typeInvalid('spec.limits', limits, 'must be an object')];
  const p = 'spec.limits';
  return [
    ...validateCount(limits.objects, `${p}.objects`, 0, Number.MAX_SAFE_INTEGER),
    ...validatePerResource(limits.objectsPerResource),
    ...validateBytes(limits.bytes),
    ...validateCount(limits.customResourceDefinitions, `${p}.customResourceDefinitions`, 0, INT32_MAX),
    ...validateCount(limits.webhookConfigurations, `${p}.webhookConfigurations`, 0, INT32_MAX),
    ...validateCount(limits.concurrentRequests, `${p}.concurrentRequests`, 1, INT32_MAX),
    ...validateCount(limits.requestsPerSecond, `${p}.requestsPerSecond`, 1, INT32_MAX),
  ];
}

function validateShardName(shard: unknown): FieldError[] {
  // Empty is unset, as for an omitempty string.
  if (shard === undefined || shard === null || shard === '') return [];
  if (typeof shard !== 'string') return [fieldErrors.typeInvalid('spec.shard', shard, 'must be a string')];
  return isDNS1123Label(shard).map((d) => fieldErrors.invalid('spec.shard', shard, d));
}

/** The form of a snapshot's location in the snapshot target: `<tenant>/<file>.snapshot` (no other directory, no `..`). */
export const SNAPSHOT_LOCATION = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?\/[A-Za-z0-9][A-Za-z0-9._-]{0,200}\.snapshot$/;
const AGE_RECIPIENT = /^age1[02-9ac-hj-np-z]{58}$/;

/** Checks a cron expression (5 fields, or 6 with seconds first); undefined when valid, else why not. Pure. */
export function cronProblem(expression: string): string | undefined {
  const fields = expression.trim().split(/\s+/).length;
  if (fields < 5 || fields > 6) return 'must be a cron expression of 5 fields (minute hour day-of-month month day-of-week), or 6 with seconds first';
  try {
    CronExpressionParser.parse(expression, { tz: 'UTC' });
    return undefined;
  } catch (err) {
    return `not a cron expression: ${(err as Error).message}`;
  }
}

function validateSnapshots(value: unknown): FieldError[] {
  const p = 'spec.snapshots';
  if (value === undefined || value === null) return [];
  if (!isPlainObject(value)) return [fieldErrors.typeInvalid(p, value, 'must be an object')];
  const errs: FieldError[] = [];
  if (value.schedule !== undefined && value.schedule !== null) {
    if (typeof value.schedule !== 'string') errs.push(fieldErrors.typeInvalid(`${p}.schedule`, value.schedule, 'must be a string'));
    else {
      const problem = cronProblem(value.schedule);
      if (problem) errs.push(fieldErrors.invalid(`${p}.schedule`, value.schedule, problem));
    }
  }
  errs.push(...validateCount(value.keep, `${p}.keep`, 1, 10000));
  if (value.recipients !== undefined && value.recipients !== null) {
    if (!Array.isArray(value.recipients)) errs.push(fieldErrors.typeInvalid(`${p}.recipients`, value.recipients, 'must be a list'));
    else
      value.recipients.forEach((r, i) => {
        if (typeof r !== 'string' || !AGE_RECIPIENT.test(r)) errs.push(fieldErrors.invalid(`${p}.recipients[${i}]`, r, 'must be an age X25519 public key (age1…)'));
      });
  }
  if (value.suspend !== undefined && value.suspend !== null && typeof value.suspend !== 'boolean') errs.push(fieldErrors.typeInvalid(`${p}.suspend`, value.suspend, 'must be a boolean'));
  return errs;
}

function validateSource(value: unknown): FieldError[] {
  const p = 'spec.source';
  if (value === undefined || value === null) return [];
  if (!isPlainObject(value)) return [fieldErrors.typeInvalid(p, value, 'must be an object')];
  const errs: FieldError[] = [];
  if (value.snapshot === undefined || value.snapshot === '') errs.push(fieldErrors.required(`${p}.snapshot`, 'the location of a snapshot in the snapshot target'));
  else if (typeof value.snapshot !== 'string' || !SNAPSHOT_LOCATION.test(value.snapshot)) {
    errs.push(fieldErrors.invalid(`${p}.snapshot`, value.snapshot, 'must be a location in the snapshot target: "<tenant>/<file>.snapshot"'));
  }
  const ref = value.identitySecretRef;
  if (ref !== undefined && ref !== null) {
    const r = `${p}.identitySecretRef`;
    if (!isPlainObject(ref)) errs.push(fieldErrors.typeInvalid(r, ref, 'must be an object'));
    else {
      for (const field of ['namespace', 'name'] as const) {
        const v = ref[field];
        if (v === undefined || v === '') errs.push(fieldErrors.required(`${r}.${field}`));
        else if (typeof v !== 'string') errs.push(fieldErrors.typeInvalid(`${r}.${field}`, v, 'must be a string'));
        else errs.push(...(field === 'namespace' ? isDNS1123Label(v) : isDNS1123Subdomain(v)).map((d) => fieldErrors.invalid(`${r}.${field}`, v, d)));
      }
      if (ref.key !== undefined && (typeof ref.key !== 'string' || !/^[-._a-zA-Z0-9]+$/.test(ref.key))) errs.push(fieldErrors.invalid(`${r}.key`, ref.key, 'must be a Secret data key'));
    }
  }
  return errs;
}

/**
 * Kind-specific checks of a Tenant (the generic ObjectMeta checks, with its
 * name a DNS-1123 label, are the caller's): a name that is not reserved,
 * owners that are users or groups with a name and no duplicates, and limits
 * that are whole, non-negative numbers within range, and a shard (when
 * set) that is a DNS-1123 label, as Shard names are. Whether that Shard
 * exists is not checked here; spec.snapshots (a cron schedule, keep >= 1,
 * age recipients) and spec.source (a snapshot location, an identity
 * Secret reference) well formed. Pure; [] when valid.
 */
export function validateTenant(obj: KubeObject): FieldError[] {
  const errs: FieldError[] = [];
  const name = obj.metadata.name;
  if (typeof name === 'string' && RESERVED_TENANT_NAMES.has(name)) errs.push(fieldErrors.invalid('metadata.name', name, 'is reserved'));
  const spec = obj.spec;
  if (spec === undefined || spec === null) return errs;
  if (!isPlainObject(spec)) return [...errs, fieldErrors.typeInvalid('spec', spec, 'must be an object')];
  return [...errs, ...validateOwners(spec.owners), ...validateLimits(spec.limits), ...validateShardName(spec.shard), ...validateSnapshots(spec.snapshots), ...validateSource(spec.source)];
}
