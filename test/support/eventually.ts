/** Options of {@link eventually}. */
export interface EventuallyOptions {
  /**
   * How long to keep trying before giving up (default 10 s): the test's
   * patience on a loaded machine, not an assertion about how fast anything is.
   */
  timeoutMs?: number;
  /** The pause between tries (default 50 ms). */
  intervalMs?: number;
  /** What is awaited, named in the error when it gives up (otherwise the last failure alone says it). */
  message?: string;
}

/**
 * The one poll-until of the tests: calls `fn` until it neither throws nor
 * returns `false`, and resolves with what it returned then (so a check may
 * be a predicate, a function that returns the value awaited or `false`, or
 * a block of assertions). When `timeoutMs` passes first it throws an Error
 * naming `message`, how long it tried and how many times, and the last
 * failure (the last error thrown, as its cause too). Mutates nothing.
 */
export async function eventually<T>(fn: () => T | Promise<T>, options: EventuallyOptions = {}): Promise<Exclude<T, false>> {
  const timeoutMs = options.timeoutMs ?? 10_000;
  const intervalMs = options.intervalMs ?? 50;
  const deadline = Date.now() + timeoutMs;
  let tries = 0;
  let last: unknown;
  for (;;) {
    tries++;
    try {
      const value = await fn();
      if (value !== false) return value as Exclude<T, false>;
      last = undefined;
    } catch (err) {
      last = err;
    }
    if (Date.now() >= deadline) {
      const what = options.message ? `waiting for ${options.message}` : 'waiting for the check to pass';
      const why = last === undefined ? 'it was still false' : `last: ${last instanceof Error ? last.message : String(last)}`;
      throw new Error(`gave up after ${timeoutMs} ms (${tries} tries) ${what}; ${why}`, { cause: last });
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
