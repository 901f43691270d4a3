import { StorageError } from '../storage-error.js';

/** Upstream's storage error code of a corrupt object (ErrCodeCorruptObj). */
const CORRUPT_OBJECT_CODE = 7;

let reporting = false;

/**
 * Turns on upstream's AllowUnsafeMalformedObjectDeletion reporting (KEP-3926):
 * a get of an unreadable object says it is a corrupt object and names its key,
 * and a list reports every unreadable object it met (see
 * {@link UnreadableObjectsError}) instead of failing on the first. Process-wide;
 * returns the function that restores the previous setting.
 */
export function setCorruptObjectReporting(on: boolean): () => void {
  const previous = reporting;
  reporting = on;
  return () => {
    reporting = previous;
  };
}

/** True while {@link setCorruptObjectReporting} is on. */
export function corruptObjectReporting(): boolean {
  return reporting;
}

/**
 * A stored value that cannot be transformed (decrypted): StorageError
 * Internal, with the object's registry key and the transformer's own message.
 */
export class CorruptObjectError extends StorageError {
  constructor(
    /** `/registry/<resource>/<namespace>/<name>`, as upstream's key. */
    readonly registryKey: string,
    /** The transformer's message (`no matching key was found for the provided AES transformer`). */
    readonly detail: string,
    message: string,
  ) {
    super('Internal', message);
  }
}

/** The error of one unreadable object, worded as upstream words it for a get or (inList) a list. */
export function corruptObjectError(registryKey: string, detail: string, inList: boolean): CorruptObjectError {
  if (reporting) {
    const message = `StorageError: corrupt object, Code: ${CORRUPT_OBJECT_CODE}, Key: ${registryKey}, ResourceVersion: 0, AdditionalErrorMsg: data from the storage is not transformable revision=0: ${detail}`;
    return new CorruptObjectError(registryKey, detail, message);
  }
  return new CorruptObjectError(registryKey, detail, inList ? `unable to transform key "${registryKey}": ${detail}` : detail);
}

/** The most unreadable objects one list error names, as upstream. */
export const MAX_REPORTED_CORRUPT_OBJECTS = 100;

/**
 * A list that met unreadable objects while reporting is on: upstream's
 * StorageReadError, naming each object's key (at most
 * {@link MAX_REPORTED_CORRUPT_OBJECTS}).
 */
export class UnreadableObjectsError extends StorageError {
  constructor(
    /** The resource listed (`secrets`). */
    readonly resource: string,
    /** The unreadable objects met, in key order. */
    readonly objects: CorruptObjectError[],
  ) {
    super('Internal', `failed to read one or more ${resource} from the storage`);
  }
}
