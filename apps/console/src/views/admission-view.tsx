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

/** Calls, failures and mean latency of one webhook or policy in `tenant` since the server started, from the latest scrape. */
function stats(s: Scrape | undefined, kind: Source['kind'], tenant: string, name: string): { calls: number; failures: number; meanMs: number } | null {
  if (!s) return null;
  if (kind === 'webhook') {
    const m = { tenant, name };
    const calls = sum(s, 'plinth_admission_webhook_requests_total', m);
    const n = sum(s, 'plinth_admission_webhook_duration_seconds_count', m);
    return { calls, failures: sum(s, 'plinth_admission_webhook_failures_total', m), meanMs: n ? (sum(s, 'plinth_admission_webhook_duration_seconds_sum', m) / n) * 1000 : 0 };
  }
  const m = { tenant, policy: name };
  const n = sum(s, 'plinth_admission_policy_check_duration_seconds_count', m);
  const errors = s.samples.filter((x) => x.name === 'plinth_admission_policy_check_total' && x.labels['tenant'] === tenant && x.labels['policy'] === name && x.labels['error_type'] && x.labels['error_type'] !== 'no_error');
  return { calls: sum(s, 'plinth_admission_policy_check_total', m), failures: errors.reduce((a, x) => a + x.value, 0), meanMs: n ? (sum(s, 'plinth_admission_policy_check_duration_seconds_sum', m) / n) * 1000 : 0 };
}

/** The tenant's admission webhooks and policies, each with its calls, failures and latency from the server's metrics (when RBAC lets the user read /metrics). */
export function AdmissionView({ api }: { api: Api }) {
  const { scrapes, error: metricsError } = useMetrics(api, 10000);
  const latest = scrapes[scrapes.length - 1];
  return (
    <section aria-labelledby="admission-title">
      <h1 id="admission-title">Admission</h1>
      {metricsError ? <p class="note">Calls and latency need read access to /metrics: {String((metricsError as Error).message)}</p> : null}
      {SOURCES.map((src) => (
        <AdmissionList key={src.path} api={api} src={src} latest={latest} />
      ))}
    </section>
  );
}

function AdmissionList({ api, src, latest }: { api: Api; src: Source; latest: Scrape | undefined }) {
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
              <th scope="col">Calls</th>
              <th scope="col">Failures</th>
              <th scope="col">Mean latency</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((r) => {
              const s = stats(latest, src.kind, api.session.tenant, r.name);
              return (
                <tr key={`${r.config}/${r.name}`}>
                  <td>{r.config}</td>
                  <td>{r.name}</td>
                  <td>{s ? s.calls : '–'}</td>
                  <td>{s ? s.failures : '–'}</td>
                  <td>{s ? `${s.meanMs.toFixed(1)} ms` : '–'}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
    </section>
  );
}
