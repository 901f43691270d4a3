// What the write benchmark reads from the server's /metrics between two scrapes: the write batches' sizes and
// the time spent authenticating and authorizing.

/** Cumulative bucket counts (by upper bound) and the sum of the batch size histogram in a /metrics text. */
function batchHistogram(text: string): { buckets: Map<string, number>; sum: number; count: number } {
  const buckets = new Map<string, number>();
  let sum = 0;
  let count = 0;
  for (const line of text.split('\n')) {
    const bucket = /^plinth_storage_write_batch_size_bucket\{le="([^"]+)"\} (\d+)/.exec(line);
    if (bucket) buckets.set(bucket[1], Number(bucket[2]));
    if (line.startsWith('plinth_storage_write_batch_size_sum')) sum = Number(line.split(' ').pop());
    if (line.startsWith('plinth_storage_write_batch_size_count')) count = Number(line.split(' ').pop());
  }
  return { buckets, sum, count };
}

/** The batches sent between two /metrics readings, as "size range: batches" and the mean writes per batch. */
export function batchDistribution(before: string, after: string): string {
  const a = batchHistogram(before);
  const b = batchHistogram(after);
  const parts: string[] = [];
  let prevBound = '0';
  let prevCum = 0;
  for (const [le, cum] of b.buckets) {
    const n = cum - (a.buckets.get(le) ?? 0);
    if (n - prevCum > 0) parts.push(`${Number(prevBound) + 1}${le === String(Number(prevBound) + 1) ? '' : `–${le === '+Inf' ? '∞' : le}`}: ${n - prevCum}`);
    prevBound = le;
    prevCum = n;
  }
  const batches = b.count - a.count;
  return `${batches} batches, mean ${((b.sum - a.sum) / Math.max(1, batches)).toFixed(1)} writes/batch; by size ${parts.join(', ')}`;
}

/** Sum (seconds) and count of every series of histogram `name` in a /metrics text. */
function histogramTotals(text: string, name: string): { sum: number; count: number } {
  let sum = 0;
  let count = 0;
  for (const line of text.split('\n')) {
    if (line.startsWith(`${name}_sum`)) sum += Number(line.split(' ').pop());
    if (line.startsWith(`${name}_count`)) count += Number(line.split(' ').pop());
  }
  return { sum, count };
}

/** Time the server spent authenticating and authorizing, from its /metrics histograms. */
export interface AuthTotals {
  authn: { sum: number; count: number };
  authz: { sum: number; count: number };
}

export function authTotals(metricsText: string): AuthTotals {
  return { authn: histogramTotals(metricsText, 'plinth_authentication_duration_seconds'), authz: histogramTotals(metricsText, 'plinth_authorization_duration_seconds') };
}

/** Mean µs per request of authentication and authorization between two readings. */
export function authMeans(before: AuthTotals, after: AuthTotals): { authnUs: number; authzUs: number } {
  const mean = (a: { sum: number; count: number }, b: { sum: number; count: number }) => ((b.sum - a.sum) / Math.max(1, b.count - a.count)) * 1e6;
  return { authnUs: mean(before.authn, after.authn), authzUs: mean(before.authz, after.authz) };
}
