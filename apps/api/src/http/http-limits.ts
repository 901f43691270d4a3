/** Request bodies above this are refused with 413, as kube-apiserver's 3 MiB limit. */
export const MAX_BODY_BYTES = 3 * 1024 * 1024;

/** The media type of a tenant snapshot (docs/snapshots.md): a restore's body of this type may be up to {@link MAX_SNAPSHOT_BYTES}. */
export const SNAPSHOT_MEDIA_TYPE = 'application/vnd.plinth.tenant-snapshot+jsonl';

/** The largest snapshot a restore takes in one request body (it is read whole and checked before anything is written). */
export const MAX_SNAPSHOT_BYTES = 1024 * 1024 * 1024;
