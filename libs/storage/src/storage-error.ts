/** What went wrong in storage, independent of HTTP. */
export type StorageErrorCode =
  | 'NotFound'
  | 'AlreadyExists'
  | 'Conflict'
  | 'Expired'
  | 'TooLargeResourceVersion'
  | 'Unavailable'
  /** A write to a tenant that is being deleted (or is gone). */
  | 'TenantTerminating';

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
  ) {
    super(message);
  }
}

/** True when `err` is a StorageError with the given code. */
export function isStorageError(err: unknown, code?: StorageErrorCode): err is StorageError {
  return err instanceof StorageError && (code === undefined || err.code === code);
}
