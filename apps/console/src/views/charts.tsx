/** A usage bar: `used` of `limit` (no limit: the count alone). */
export function UsageBar({ label, used, limit }: { label: string; used: number; limit?: number }) {
  if (limit === undefined) {
    return (
      <div class="usage">
        <span>
          {label}: {used}
        </span>
      </div>
    );
  }
  const pct = limit > 0 ? Math.min(100, Math.round((used / limit) * 100)) : 100;
  return (
    <div class="usage">
      <span>
        {label}: {used} / {limit}
      </span>
      <meter min={0} max={limit || 1} value={used} high={limit * 0.8} optimum={0} aria-label={`${label}: ${used} of ${limit} (${pct}%)`} />
    </div>
  );
}

/** A small line chart of `values` (per-second rates over the last minutes), its latest value beside it. */
export function Sparkline({ label, values }: { label: string; values: number[] }) {
  const w = 120;
  const h = 24;
  const max = Math.max(1, ...values);
  const pts = values.map((v, i) => `${values.length > 1 ? (i / (values.length - 1)) * w : 0},${h - (v / max) * h}`).join(' ');
  const last = values.length ? values[values.length - 1]! : 0;
  return (
    <span class="spark">
      <svg width={w} height={h} viewBox={`0 0 ${w} ${h}`} role="img" aria-label={`${label}: ${last.toFixed(1)} per second now, at most ${max.toFixed(1)}`}>
        <polyline points={pts} fill="none" stroke="currentColor" stroke-width="1.5" />
      </svg>
      <span>
        {label} {last.toFixed(1)}/s
      </span>
    </span>
  );
}
