/** Target size of one chunk of a streamed list, in characters of JSON. */
export const LIST_CHUNK_CHARS = 1024 * 1024;
/** Rows of a list's first chunk, before anything is known about their size. */
export const FIRST_CHUNK_ROWS = 16;
const MAX_CHUNK_ROWS = 1000;
/** Objects measured per chunk (evenly spaced), so sizing costs a bounded share of the encoding. */
const SAMPLES = 8;

/**
 * Sizes the chunks in which an unpaginated list is read, so that each holds
 * about LIST_CHUNK_CHARS of objects whatever their size: small objects are
 * read up to 1,000 a statement, very large ones one at a time. The estimate
 * is the JSON size of a few objects of the previous chunk, since what a
 * chunk costs in memory is its objects (a Table of them encodes far smaller).
 */
export class ListChunkSizer {
  private next = FIRST_CHUNK_ROWS;

  /** Rows to read in the next chunk (bound, so it can be handed to storage). */
  readonly rows = (): number => this.next;

  /** Learns from a chunk's objects; an empty chunk changes nothing. Does not mutate `objects`. */
  observe(objects: readonly unknown[]): void {
    if (objects.length === 0) return;
    const step = Math.max(1, Math.floor(objects.length / SAMPLES));
    let chars = 0;
    let measured = 0;
    for (let i = 0; i < objects.length && measured < SAMPLES; i += step, measured++) chars += JSON.stringify(objects[i])?.length ?? 0;
    const perObject = Math.max(1, chars / measured);
    this.next = Math.min(MAX_CHUNK_ROWS, Math.max(1, Math.floor(LIST_CHUNK_CHARS / perObject)));
  }
}
