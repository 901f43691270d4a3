/**
 * Runs `fn` over `items` with at most `limit` calls in flight; resolves when
 * all are done, or rejects with the first failure (after the calls already
 * started have settled). Each commit waits for its own fsync, so a few
 * writes in flight share the disk's flushes instead of queueing for them.
 */
export async function forEachConcurrently<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  let failure: { err: unknown } | undefined;
  const worker = async () => {
    while (!failure && next < items.length) {
      const item = items[next++];
      try {
        await fn(item);
      } catch (err) {
        failure ??= { err };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  if (failure) throw failure.err;
}
