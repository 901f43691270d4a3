import { isStorageError } from '@plinth/storage';
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
    case 'Expired':
      throw ApiError.gone(err.message);
    case 'TooLargeResourceVersion':
      throw ApiError.timeout(`Timeout: ${err.message}`, 1, [
        { reason: 'ResourceVersionTooLarge', message: 'Too large resource version' },
      ]);
    default:
      throw ApiError.serviceUnavailable(err.message);
  }
}
