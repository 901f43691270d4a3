import { useEffect, useState } from 'preact/hooks';
import type { Api, KubeObject } from '../api.js';
import { type Scrape, sum, useMetrics } from '../metrics.js';
import { Problem } from './problem.js';

interface Source {
  title: string;
  path: string;
  kind: 'webhook' | 'policy';
}

const SOURCES: Source[] = [
  { title: 'Validating webhooks', path: '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations', kind: 'webhook' },
  { title: 'Mutating webhooks', path: '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations', kind: 'webhook' },
  { title: 'Validating admission policies', path: '/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies', kind: 'policy' },
];

interface Stats {
  calls: number;
  failures: number;
  /** Seconds spent in all calls, and how many were timed. */
  seconds: number;
  timed: number;
}

/** Calls, failures and time of one webhook or policy in `tenant` since the server started, from one scrape. */
function stats(s: Scrape, kind: Source['kind'], tenant: string, name: string): Stats {
  if (kind === 'webhook') {
    const m = { tenant, name };
    return {
      calls: sum(s, 'plinth_admission_webhook_requests_total', m),
      failures: sum(s, 'plinth_admission_webhook_failures_total', m),
      seconds: sum(s, 'plinth_admission_webhook_duration_seconds_sum', m),
      timed: sum(s, 'plinth_admission_webhook_duration_seconds_count', m),
    };
  }
  const m = { tenant, policy: name };
  const errors = s.samples.filter((x) => x.name === 'plinth_admission_policy_check_total' && x.labels['tenant'] === tenant && x.labels['policy'] === name && x.labels['error_type'] && x.labels['error_type'] !== 'no_error');
  return {
    calls: sum(s, 'plinth_admission_policy_check_total', m),
    failures: errors.reduce((a, x) => a + x.value, 0),
    seconds: sum(s, 'plinth_admission_policy_check_duration_seconds_sum', m),
    timed: sum(s, 'plinth_admission_policy_check_duration_seconds_count', m),
  };
}

/** `b - a`: what happened between two scrapes (a restart in between counts from zero). */
function since(a: Stats, b: Stats): Stats {
  const d = (x: number, y: number) => (y >= x ? y - x : y);
  return { calls: d(a.calls, b.calls), failures: d(a.failures, b.failures), seconds: d(a.seconds, b.seconds), timed: d(a.timed, b.timed) };
}

const meanMs = (s: Stats) => (s.timed ? `${((s.seconds / s.timed) * 1000).toFixed(1)} ms` : '–');

/** The tenant's admission webhooks and policies, each with its calls, failures and latency from the server's metrics (when RBAC lets the user read /metrics). */
export function AdmissionView({ api }: { api: Api }) {
  const { scrapes, error: metricsError } = useMetrics(api, 10000);
  return (
    <section aria-labelledby="admission-title">
      <h1 id="admission-title">Admission</h1>
      {metricsError ? <p class="note">Calls and latency need read access to /metrics: {String((metricsError as Error).message)}</p> : null}
      {SOURCES.map((src) => (
        <AdmissionList key={src.path} api={api} src={src} scrapes={scrapes} />
      ))}
    </section>
  );
}

/** One kind of admission configuration, each webhook or policy with its calls since the first scrape of this page (up to five minutes back) and since the server started. */
function AdmissionList({ api, src, scrapes }: { api: Api; src: Source; scrapes: Scrape[] }) {
  const [items, setItems] = useState<KubeObject[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    api.json<{ items: KubeObject[] }>(api.t(src.path)).then((l) => setItems(l.items), setError);
  }, [src.path]);
  const rows: { config: string; name: string }[] = [];
  for (const o of items ?? []) {
    const hooks = (o['webhooks'] as { name: string }[] | undefined) ?? [];
    if (src.kind === 'webhook') for (const h of hooks) rows.push({ config: o.metadata.name, name: h.name });
    else rows.push({ config: o.metadata.name, name: o.metadata.name });
  }
  return (
    <section aria-label={src.title}>
      <h2>{src.title}</h2>
      {error ? <Problem error={error} /> : items === null ? <p>Loading…</p> : rows.length === 0 ? <p>None.</p> : (
        <table class="list">
          <thead>
            <tr>
              <th scope="col">Configuration</th>
              <th scope="col">{src.kind === 'webhook' ? 'Webhook' : 'Policy'}</th>
              <th scope="col">Calls (recent / since start)</th>
              <th scope="col">Failures (recent / since start)</th>
              <th scope="col">Mean latency (recent / since start)</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((r) => {
              const first = scrapes[0];
              const last = scrapes[scrapes.length - 1];
              const total = last ? stats(last, src.kind, api.session.tenant, r.name) : null;
              const recent = first && last && total ? since(stats(first, src.kind, api.session.tenant, r.name), total) : null;
              return (
                <tr key={`${r.config}/${r.name}`} data-admission={r.name}>
                  <td>{r.config}</td>
                  <td>{r.name}</td>
                  <td data-testid="calls">{total && recent ? `${recent.calls} / ${total.calls}` : '–'}</td>
                  <td>{total && recent ? `${recent.failures} / ${total.failures}` : '–'}</td>
                  <td>{total && recent ? `${meanMs(recent)} / ${meanMs(total)}` : '–'}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
    </section>
  );
}
