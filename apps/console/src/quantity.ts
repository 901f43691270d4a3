const SUFFIX: Record<string, number> = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18 };

/** A Kubernetes quantity (`1Gi`, `500M`, `1024`) as a number; undefined when it is not one. */
export function parseQuantity(q: unknown): number | undefined {
  if (typeof q === 'number') return q;
  if (typeof q !== 'string') return undefined;
  const m = /^([0-9.]+)([KMGTPE]i|[kMGTPE])?$/.exec(q.trim());
  if (!m) return undefined;
  return Number(m[1]) * (m[2] ? SUFFIX[m[2]]! : 1);
}
