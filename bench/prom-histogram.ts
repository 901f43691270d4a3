// Reads a Prometheus histogram from /metrics text, for benchmarks that compare a server-side timing before and after a phase.

/** Cumulative bucket counts of one (label-less) histogram, by upper bound in seconds (+Inf last). */
export type HistogramBuckets = Array<{ le: number; count: number }>;

/** The buckets of histogram `name` in the /metrics `text`; empty when it is not there. */
export function scrapeHistogram(text: string, name: string): HistogramBuckets {
  const out: HistogramBuckets = [];
  const re = new RegExp(`^${name}_bucket\\{le="([^"]+)"\\} (\\d+)$`, 'gm');
  for (const m of text.matchAll(re)) out.push({ le: m[1] === '+Inf' ? Infinity : Number(m[1]), count: Number(m[2]) });
  return out.sort((a, b) => a.le - b.le);
}

/**
 * p50 and p99 in milliseconds of the observations made between two scrapes,
 * interpolated linearly inside the bucket each falls in (so only as exact as
 * the buckets are fine); n is the number of observations.
 */
export function histogramQuantiles(before: HistogramBuckets, after: HistogramBuckets): { p50: number; p99: number; n: number } {
  const delta = after.map((b) => ({ le: b.le, count: b.count - (before.find((x) => x.le === b.le)?.count ?? 0) }));
  const n = delta.at(-1)?.count ?? 0;
  const at = (q: number): number => {
    if (n === 0) return NaN;
    const rank = q * n;
    let lower = 0;
    let below = 0;
    for (const b of delta) {
      if (b.count >= rank) {
        if (b.le === Infinity) return lower * 1000;
        const inBucket = b.count - below;
        return (lower + (inBucket > 0 ? (b.le - lower) * ((rank - below) / inBucket) : 0)) * 1000;
      }
      lower = b.le;
      below = b.count;
    }
    return NaN;
  };
  return { p50: at(0.5), p99: at(0.99), n };
}
