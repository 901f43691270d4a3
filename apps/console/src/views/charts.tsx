import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { useTheme } from '../theme.js';

/** How full a usage is: under 80 %, from 80 %, at or over the limit. */
function level(used: number, limit: number): 'ok' | 'warn' | 'full' {
  if (limit <= 0 || used >= limit) return 'full';
  return used >= limit * 0.8 ? 'warn' : 'ok';
}

/**
 * A usage bar: `used` of `limit` as a horizontal bar chart (green, amber
 * from 80 %, red at the limit), the figures beside it; with no limit, the
 * count alone. An SVG drawn with attributes only (no style attribute, so
 * the strict CSP holds); its colours come from the stylesheet.
 */
export function UsageBar({ label, used, limit }: { label: string; used: number; limit?: number }) {
  if (limit === undefined) {
    return (
      <div class="usage">
        <span class="usage-text">
          {label}: {used}
        </span>
      </div>
    );
  }
  const pct = limit > 0 ? Math.min(100, (used / limit) * 100) : 100;
  return (
    <div class="usage">
      <span class="usage-text">
        {label}: {used} / {limit}
      </span>
      <svg class={`bar ${level(used, limit)}`} viewBox="0 0 100 6" preserveAspectRatio="none" role="img" aria-label={`${label}: ${used} of ${limit} (${Math.round(pct)}%)`}>
        <rect class="track" x="0" y="0" width="100" height="6" rx="2" />
        <rect class="fill" x="0" y="0" width={pct} height="6" rx="2" />
      </svg>
    </div>
  );
}

/** A small line chart of `values` (per-second rates over the last minutes), its latest value beside it. */
export function Sparkline({ label, values, kind }: { label: string; values: number[]; kind: 'requests' | 'rejected' }) {
  const w = 80;
  const h = 20;
  const max = Math.max(1, ...values);
  const xy = values.map((v, i) => [values.length > 1 ? (i / (values.length - 1)) * w : 0, h - (v / max) * (h - 2) - 1] as const);
  const line = xy.map(([x, y]) => `${x.toFixed(1)},${y.toFixed(1)}`).join(' ');
  const area = xy.length > 1 ? `0,${h} ${line} ${w},${h}` : '';
  const last = values.length ? values[values.length - 1]! : 0;
  return (
    <span class={`spark ${kind}`}>
      <svg width={w} height={h} viewBox={`0 0 ${w} ${h}`} role="img" aria-label={`${label}: ${last.toFixed(1)} per second now, at most ${Math.max(0, ...values).toFixed(1)}`}>
        {area && <polygon class="area" points={area} />}
        {xy.length > 1 ? <polyline class="line" points={line} fill="none" /> : <line class="line" x1="0" y1={h - 1} x2={w} y2={h - 1} />}
      </svg>
      <span class="spark-value">
        {last.toFixed(1)} {label}
      </span>
    </span>
  );
}

/** One line of a {@link RateChart}. */
export interface RateSeries {
  /** Short key (`requests`, `rejected`): the CSS variable `--chart-<key>` colours it, `data-max-<key>` exposes its peak. */
  key: string;
  label: string;
  values: number[];
}

/** Unix seconds as the local time of day, `HH:MM:SS` (one line; the chart spans minutes, never days). */
function clock(t: number): string {
  const d = new Date(t * 1000);
  return [d.getHours(), d.getMinutes(), d.getSeconds()].map((n) => String(n).padStart(2, '0')).join(':');
}

/** A CSS custom property of `el` (the theme's colours live in the stylesheet). */
function cssVar(el: Element, name: string, fallback: string): string {
  return getComputedStyle(el).getPropertyValue(name).trim() || fallback;
}

/**
 * A time-series chart of per-second rates (uPlot on a canvas): `times` in
 * Unix seconds, one line per series; redrawn with the theme's colours when
 * the theme changes, resized with its box. The chart is an image to
 * assistive technology, its label naming each series' latest value and
 * peak; `data-points` and `data-max-<key>` say what it draws.
 */
export function RateChart({ title, times, series, height = 150, windowSeconds = 300 }: { title: string; times: number[]; series: RateSeries[]; height?: number; windowSeconds?: number }) {
  const box = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const theme = useTheme();
  // One sample is not yet a line: the chart starts (empty until then, over the last minutes up to now) with the second.
  const drawn = times.length >= 2;
  const data = (drawn ? [times, ...series.map((s) => s.values)] : [[], ...series.map(() => [])]) as uPlot.AlignedData;

  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const axis = cssVar(el, '--chart-axis', '#646b79');
    const grid = cssVar(el, '--chart-grid', 'rgba(128,128,128,0.2)');
    const opts: uPlot.Options = {
      width: Math.max(200, el.clientWidth),
      height,
      legend: { show: false },
      cursor: { drag: { x: false, y: false } },
      scales: {
        x: {
          time: true,
          // Up to `windowSeconds` back from the newest sample: the samples so far while younger (a minute at least), then a moving window.
          range: (_u, min, max) => {
            const end = Number.isFinite(max) ? max : Date.now() / 1000;
            const first = Number.isFinite(min) ? min : end - windowSeconds;
            return [Math.min(end - 60, Math.max(end - windowSeconds, first)), end];
          },
        },
        y: { range: (_u, _min, max) => [0, Math.max(1, max * 1.15)] },
      },
      axes: [
        { stroke: axis, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid, width: 1 }, space: 70, values: (_u, ticks) => ticks.map(clock) },
        { stroke: axis, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid, width: 1 }, size: 40, values: (_u, ticks) => ticks.map((t) => (t >= 10 ? t.toFixed(0) : t.toFixed(1))) },
      ],
      series: [
        {},
        ...series.map((s) => {
          const color = cssVar(el, `--chart-${s.key}`, '#0172ad');
          return { label: s.label, stroke: color, width: 2, fill: `${color}22`, points: { show: false } };
        }),
      ],
    };
    const u = new uPlot(opts, data, el);
    plot.current = u;
    const resize = new ResizeObserver(() => u.setSize({ width: Math.max(200, el.clientWidth), height }));
    resize.observe(el);
    return () => {
      resize.disconnect();
      u.destroy();
      plot.current = null;
    };
  }, [theme, series.length, height]);

  useEffect(() => {
    plot.current?.setData(data);
  });

  const maxes: Record<string, string> = {};
  for (const s of series) maxes[`data-max-${s.key}`] = String(drawn ? Math.max(0, ...s.values) : 0);
  const describe = series.map((s) => `${s.label} ${(s.values[s.values.length - 1] ?? 0).toFixed(1)} per second now, at most ${Math.max(0, ...s.values).toFixed(1)}`).join('; ');
  return (
    <figure class="rate-chart">
      <div ref={box} class="rate-canvas" role="img" aria-label={`${title}: ${times.length ? describe : 'no data yet'}`} data-testid="rate-chart" data-points={String(drawn ? times.length : 0)} {...maxes} />
      <figcaption>
        {series.map((s) => (
          <span key={s.key} class={`legend ${s.key}`}>
            <span class="swatch" aria-hidden="true" /> {s.label}: {(s.values[s.values.length - 1] ?? 0).toFixed(1)}/s now, peak {Math.max(0, ...s.values).toFixed(1)}/s
          </span>
        ))}
      </figcaption>
    </figure>
  );
}
