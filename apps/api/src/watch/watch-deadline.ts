/**
 * When the server ends a watch started at `now` (ms since the epoch), as
 * kube-apiserver: the client's `timeoutSeconds` when it gave one (at most
 * `maxMs`), otherwise a random point between half and all of `maxMs`, so
 * watches opened together do not all end (and re-list) together. Pure;
 * `random` returns a number in [0, 1), like Math.random.
 */
export function watchDeadline(now: number, timeoutSeconds: number | undefined, maxMs: number, random: () => number = Math.random): number {
  return now + (timeoutSeconds ? Math.min(timeoutSeconds * 1000, maxMs) : maxMs * (0.5 + 0.5 * random()));
}
