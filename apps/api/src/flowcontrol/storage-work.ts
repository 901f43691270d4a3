/**
 * What a write makes PostgreSQL do beyond storing its bytes, in seats of
 * work (one seat: about one plain write through the whole server).
 *
 * A label of a stored object is an entry in three places of GIN indexes:
 * its key and its value in the objects' label index (`jsonb_ops`,
 * migrations 0011 and 0019), and its key-value path in the change log's
 * label index (`jsonb_path_ops`, migration 0018). An update writes them
 * again (the row is a new version, not a HOT update); a delete writes the
 * change log's entry (the objects' entries are removed later by vacuum).
 * Annotations are not indexed: they cost their bytes, which the byte
 * estimate already counts.
 *
 * Calibrated on a 2-core host with a local PostgreSQL (docs/benchmarks.md,
 * "Label-heavy writes"): a create took 330–480 ms with 10,000 labels and
 * 5.1–7.4 s with 100,000, about 40–70 µs of PostgreSQL time a label under
 * load, against about 1.5 ms of CPU (server and PostgreSQL) for a plain
 * create: a label is about a fiftieth of a plain write.
 */

/** Index entries a create or update writes per label of the object it stores. */
export const INDEX_ENTRIES_PER_LABEL = 3;
/** Index entries a delete writes per label (the change log's). */
export const INDEX_ENTRIES_PER_DELETED_LABEL = 1;
/** Index entries that count as one seat of work (64 labels of a create). */
export const SEAT_INDEX_ENTRIES = 192;

/** Label index entries a write with this method writes for an object of `labels` labels. */
export function indexEntriesOf(method: string, labels: number): number {
  const n = Math.max(0, Math.floor(labels));
  return method === 'DELETE' ? n * INDEX_ENTRIES_PER_DELETED_LABEL : n * INDEX_ENTRIES_PER_LABEL;
}

/** Seats of work for writing `entries` label index entries (whole seats: a plain object's few labels cost none). */
export function seatsForIndexEntries(entries: number): number {
  return Math.floor(Math.max(0, entries) / SEAT_INDEX_ENTRIES);
}
