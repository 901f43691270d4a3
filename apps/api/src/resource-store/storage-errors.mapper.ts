import { isStorageError, type LimitExceeded, UnreadableObjectsError } from '@plinth/storage';
import { ApiError } from '@plinth/apimachinery';
import type { ResourceDefinition } from '../registry/resource-definition.js';

/**
 * Turns a StorageError into the ApiError upstream would send for `def` and
 * `name`; rethrows anything else unchanged.
 */
export function mapStorageError(err: unknown, def: ResourceDefinition, name: string): never {
  if (!isStorageError(err)) throw err;
  const target = { group: def.group, kind: def.resource, name };
  switch (err.code) {
    case 'NotFound':
      throw ApiError.notFound(target);
    case 'AlreadyExists':
      throw ApiError.alreadyExists(target);
    case 'Conflict':
      throw ApiError.staleConflict(target);
    case 'TenantTerminating':
      throw ApiError.forbidden(target, err.message);
    case 'QuotaExceeded': {
      // Upstream's quota admission wording.
      const q = err.quotaExceeded!;
      throw ApiError.forbidden(target, `exceeded quota: ${q.quota}, requested: ${q.hardName}=${q.requested}, used: ${q.hardName}=${q.used}, limited: ${q.hardName}=${q.limit}`);
    }
    case 'LimitExceeded':
      throw ApiError.forbidden(target, tenantLimitMessage(err.limitExceeded!));
    case 'Expired':
      throw ApiError.gone(err.message);
    case 'TooLargeResourceVersion':
      throw ApiError.timeout(`Timeout: ${err.message}`, 1, [
        { reason: 'ResourceVersionTooLarge', message: 'Too large resource version' },
      ]);
    case 'Unavailable':
      throw ApiError.unavailable(err.message);
    case 'Internal':
      if (err instanceof UnreadableObjectsError) throw unreadableObjectsError(err);
      // A stored value that cannot be decrypted: upstream's storage InternalError, for this object only.
      throw ApiError.internal(err.message);
    default:
      throw ApiError.serviceUnavailable(err.message);
  }
}

/**
 * How a tenant limit is named in messages, after ResourceQuota's names:
 * `count/<resource>.<group>` and `bytes/<resource>.<group>` per resource or
 * category, `count/*` and `bytes/*` for all of the tenant's objects.
 */
export function tenantLimitName(usageKey: string, measure: LimitExceeded['measure']): string {
  const prefix = measure === 'bytes' ? 'bytes' : 'count';
  if (usageKey === '') return `${prefix}/*`;
  const slash = usageKey.indexOf('/');
  // Built-in kinds of named groups are stored as "<group>/<resource>"; custom resources as "<plural>.<group>".
  const resource = slash >= 0 ? `${usageKey.slice(slash + 1)}.${usageKey.slice(0, slash)}` : usageKey;
  return `${prefix}/${resource}`;
}

/** Upstream's quota wording for a write refused by a tenant limit. */
export function tenantLimitMessage(l: LimitExceeded): string {
  const n = tenantLimitName(l.usageKey, l.measure);
  return `exceeded tenant limit: ${l.tenant}, requested: ${n}=${l.requested}, used: ${n}=${l.used}, limited: ${n}=${l.limit}`;
}

/**
 * Upstream's StorageReadError of a list that met unreadable objects (with
 * AllowUnsafeMalformedObjectDeletion on): 500, one cause per object, its key
 * as the field and the transformer's message.
 */
export function unreadableObjectsError(err: UnreadableObjectsError): ApiError {
  return new ApiError(500, 'StorageReadError', err.message, {
    kind: err.resource,
    causes: err.objects.map((o) => ({ reason: 'UnexpectedServerResponse', field: o.registryKey, message: o.detail })),
  });
}
