/** What went wrong in storage, independent of HTTP. */
export type StorageErrorCode =
  | 'NotFound'
  | 'AlreadyExists'
  | 'Conflict'
  | 'Expired'
  | 'TooLargeResourceVersion'
  | 'Unavailable'
  /** A write to a tenant that is being deleted (or is gone). */
  | 'TenantTerminating'
  /** A write that would take a tenant past one of its limits (see {@link LimitExceeded}). */
  | 'LimitExceeded'
  /** A create that would take a namespace past a ResourceQuota (see {@link QuotaExceeded}). */
  | 'QuotaExceeded'
  /** Upstream's storage InternalError: a stored value that cannot be transformed (decrypted) or encrypted. */
  | 'Internal';

/** Which ResourceQuota a refused create would have exceeded. */
export interface QuotaExceeded {
  quota: string;
  /** The resource's name in the quota's `spec.hard` (`count/configmaps`, `secrets`, …). */
  hardName: string;
  limit: number;
  used: number;
  requested: number;
}

/** Which tenant limit a refused write would have exceeded, and by how much. */
export interface LimitExceeded {
  tenant: string;
  /** The usage key: '' for all of the tenant's objects, a storage resource, or a category such as `webhookconfigurations`. */
  usageKey: string;
  measure: 'objects' | 'bytes';
  limit: number;
  used: number;
  requested: number;
}

/**
 * The only error type the storage layer throws for expected conditions.
 * `currentRevision` is set for Expired/TooLargeResourceVersion.
 */
export class StorageError extends Error {
  constructor(
    readonly code: StorageErrorCode,
    message: string,
    readonly currentRevision?: number,
    readonly oldestRevision?: number,
    readonly limitExceeded?: LimitExceeded,
    readonly quotaExceeded?: QuotaExceeded,
  ) {
    super(message);
  }
}

/** True when `err` is a StorageError with the given code. */
export function isStorageError(err: unknown, code?: StorageErrorCode): err is StorageError {
  return err instanceof StorageError && (code === undefined || err.code === code);
}
