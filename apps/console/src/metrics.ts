import { useEffect, useState } from 'preact/hooks';
import type { Api } from './api.js';

/** Samples of the server's Prometheus metrics: metric name and labels to value. */
export interface Scrape {
  at: number;
  samples: { name: string; labels: Record<string, string>; value: number }[];
}

const LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

/** Parses Prometheus' text exposition format (comments skipped; label values unescaped). */
export function parseMetrics(text: string, at = Date.now()): Scrape {
  const samples: Scrape['samples'] = [];
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const m = LINE.exec(line);
    if (!m) continue;
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(LABEL)) labels[l[1]!] = l[2]!.replace(/\\(.)/g, (_s, c: string) => (c === 'n' ? '\n' : c));
    samples.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return { at, samples };
}

/** The sum of `name` over samples whose labels include `match`. */
export function sum(s: Scrape, name: string, match: Record<string, string>): number {
  let total = 0;
  for (const x of s.samples) if (x.name === name && Object.entries(match).every(([k, v]) => x.labels[k] === v)) total += x.value;
  return total;
}

/** How many scrapes are kept: five minutes at one every five seconds. */
const KEEP = 60;

/**
 * Scrapes `/metrics` every `everyMs` (needs `get` on the non-resource URL
 * /metrics: platform administrators and system:monitoring), keeping the
 * last five minutes; the error (e.g. 403 for a tenant identity) otherwise.
 */
export function useMetrics(api: Api, everyMs = 5000): { scrapes: Scrape[]; error: unknown } {
  const [scrapes, setScrapes] = useState<Scrape[]>([]);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    let stopped = false;
    const tick = () =>
      api
        .raw('/metrics', { accept: 'text/plain' })
        .then((r) => r.text())
        .then((t) => {
          if (stopped) return;
          setError(null);
          setScrapes((s) => [...s.slice(-(KEEP - 1)), parseMetrics(t)]);
        })
        .catch((e) => !stopped && setError(e));
    void tick();
    const id = setInterval(tick, everyMs);
    return () => {
      stopped = true;
      clearInterval(id);
    };
  }, [api.session.token]);
  return { scrapes, error };
}

/** Per-second rates of a counter between consecutive scrapes (counter resets count as 0). */
export function rates(scrapes: Scrape[], name: string, match: Record<string, string>): number[] {
  const out: number[] = [];
  for (let i = 1; i < scrapes.length; i++) {
    const a = scrapes[i - 1]!;
    const b = scrapes[i]!;
    const d = sum(b, name, match) - sum(a, name, match);
    out.push(d > 0 ? d / ((b.at - a.at) / 1000) : 0);
  }
  return out;
}

/** The time (Unix seconds) of each rate {@link rates} returns: the later scrape of each pair. */
export function rateTimes(scrapes: Scrape[]): number[] {
  return scrapes.slice(1).map((s) => s.at / 1000);
}
