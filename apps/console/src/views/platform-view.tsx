import { useEffect, useState } from 'preact/hooks';
import type { Api, KubeObject } from '../api.js';
import { rates, rateTimes, useMetrics } from '../metrics.js';
import { parseQuantity } from '../quantity.js';
import { RateChart, Sparkline, UsageBar } from './charts.js';
import { Problem } from './problem.js';
import { TenantForm } from './tenant-form.js';
import { TenantSnapshots } from './tenant-snapshots.js';

/** The Tenants collection of the platform scope. */
export const TENANTS = '/apis/tenancy.plinth.dev/v1beta1/tenants';

interface Tenant extends KubeObject {
  spec?: { owners?: { kind: string; name: string }[]; limits?: Record<string, unknown> & { objectsPerResource?: Record<string, number> }; shard?: string };
  status?: {
    phase?: string;
    shard?: string;
    url?: string;
    usage?: { objects?: number; bytes?: number | string; objectsPerResource?: Record<string, number> };
    snapshots?: { lastSuccessfulTime?: string };
    conditions?: { type: string; status: string; reason: string; message: string }[];
  };
}

/**
 * Platform administrators' view: every tenant with its phase, owners,
 * shard and usage against `spec.limits`, requests per second and 429s per
 * tenant over the last minutes (from /metrics), a form to create one, and
 * delete with confirmation; the list is watched, so `Terminating` and the
 * falling usage show as the deletion proceeds. Opening a tenant addresses
 * it with the same token (`onOpen`): a token valid everywhere (a static
 * token of `system:masters`, an unrestricted OIDC identity) sees inside;
 * a ServiceAccount token of the platform scope gets the server's 401.
 */
export function PlatformView({ api, onOpen }: { api: Api; onOpen: (tenant: string) => void }) {
  const { tenants, error } = useWatchedTenants(api);
  const [deleting, setDeleting] = useState<string | null>(null);
  const [snapshotsOf, setSnapshotsOf] = useState<string | null>(null);
  const { scrapes, error: metricsError } = useMetrics(api);
  const times = rateTimes(scrapes);
  const requests = (name: string) => rates(scrapes, 'plinth_flowcontrol_request_wait_duration_seconds_count', { tenant: name });
  const rejected = (name: string) => rates(scrapes, 'plinth_flowcontrol_rejected_requests_total', { tenant: name });
  return (
    <section aria-labelledby="tenants-title">
      <div class="page-head">
        <h1 id="tenants-title">Tenants</h1>
        {tenants && (
          <p class="note" data-testid="tenant-count">
            {tenants.length} tenants, {tenants.filter((t) => t.status?.phase === 'Active').length} active
          </p>
        )}
      </div>
      {error ? <Problem error={error} /> : null}
      {metricsError ? (
        <p class="note">Request charts need read access to /metrics: {String((metricsError as Error).message)}</p>
      ) : null}
      {tenants && (
        <div class="table-wrap" data-testid="tenants-wrap">
          <table class="list tenants" data-testid="tenants">
            <colgroup>
              <col class="c-name" />
              <col class="c-phase" />
              <col class="c-owners" />
              <col class="c-usage" />
              <col class="c-requests" />
              <col class="c-actions" />
            </colgroup>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Phase</th>
                <th scope="col">Owners</th>
                <th scope="col">Usage of limits</th>
                <th scope="col">Requests, 5 min</th>
                <th scope="col">
                  <span class="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {tenants.map((t) => {
                const limits = t.spec?.limits ?? {};
                const usage = t.status?.usage ?? {};
                const name = t.metadata.name;
                const phase = t.status?.phase ?? '…';
                const restore = t.status?.conditions?.find((c) => c.type === 'SourceRestored');
                const snapshot = t.status?.conditions?.find((c) => c.type === 'SnapshotSucceeded');
                return (
                  <tr key={name} data-tenant={name}>
                    <th scope="row">
                      {name === 'default' ? (
                        <span class="tenant-name">{name}</span>
                      ) : (
                        <button type="button" class="link" onClick={() => onOpen(name)} aria-label={`Open tenant ${name}`}>
                          {name}
                        </button>
                      )}
                      <small class="shard">shard {t.status?.shard ?? t.spec?.shard ?? '–'}</small>
                      <button type="button" class="secondary outline small snapshots-button" onClick={() => setSnapshotsOf(name)} aria-label={`Snapshots of tenant ${name}`}>
                        Snapshots
                      </button>
                    </th>
                    <td>
                      <span class={`badge phase ${phase}`}>{phase}</span>
                      {restore && (
                        <small class="condition" data-testid="source-restored" title={restore.message}>
                          restore: {restore.reason}
                        </small>
                      )}
                      {snapshot && (
                        <small class="condition" title={snapshot.message}>
                          snapshot: {snapshot.reason}
                          {t.status?.snapshots?.lastSuccessfulTime ? `, last ${t.status.snapshots.lastSuccessfulTime}` : ''}
                        </small>
                      )}
                    </td>
                    <td class="owners">
                      {(t.spec?.owners ?? []).map((o) => (
                        <span key={`${o.kind}:${o.name}`} class="owner">
                          {o.kind}:{o.name}
                        </span>
                      ))}
                    </td>
                    <td>
                      <UsageBar label="objects" used={usage.objects ?? 0} limit={parseQuantity(limits['objects'])} />
                      <UsageBar label="bytes" used={parseQuantity(usage.bytes) ?? 0} limit={parseQuantity(limits['bytes'])} />
                      {Object.entries(limits.objectsPerResource ?? {}).map(([r, n]) => (
                        <UsageBar key={r} label={r} used={usage.objectsPerResource?.[r] ?? 0} limit={n} />
                      ))}
                    </td>
                    <td>
                      <Sparkline label="req/s" kind="requests" values={requests(name)} />
                      <Sparkline label="429/s" kind="rejected" values={rejected(name)} />
                    </td>
                    <td>
                      {name !== 'default' && !t.metadata.deletionTimestamp && (
                        <button type="button" class="danger outline small" onClick={() => setDeleting(name)} aria-label={`Delete tenant ${name}`}>
                          Delete
                        </button>
                      )}
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
      {deleting && <DeleteTenant api={api} name={deleting} onClose={() => setDeleting(null)} />}
      {snapshotsOf && <TenantSnapshots api={api} tenant={snapshotsOf} onClose={() => setSnapshotsOf(null)} />}
      {tenants && !metricsError && (
        <section aria-labelledby="activity-title" class="activity">
          <h2 id="activity-title">Requests and 429s over time</h2>
          <p class="note">Per second, from the server's /metrics every 5 seconds, the last five minutes.</p>
          <div class="chart-grid">
            {tenants.map((t) => (
              <article key={t.metadata.name} class="chart-card" data-chart-tenant={t.metadata.name}>
                <h3>{t.metadata.name}</h3>
                <RateChart
                  title={`Requests of tenant ${t.metadata.name}`}
                  times={times}
                  series={[
                    { key: 'requests', label: 'requests', values: requests(t.metadata.name) },
                    { key: 'rejected', label: '429s', values: rejected(t.metadata.name) },
                  ]}
                />
              </article>
            ))}
          </div>
        </section>
      )}
      <TenantForm api={api} />
    </section>
  );
}

/**
 * Every Tenant, listed then watched (phase, usage and deletions live); a
 * watch that ends by itself lists again a second later.
 */
function useWatchedTenants(api: Api): { tenants: Tenant[] | null; error: unknown } {
  const [tenants, setTenants] = useState<Tenant[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [round, setRound] = useState(0);
  useEffect(() => {
    const abort = new AbortController();
    let timer: ReturnType<typeof setTimeout> | undefined;
    api
      .json<{ items: Tenant[]; metadata: { resourceVersion: string } }>(TENANTS, { signal: abort.signal })
      .then((l) => {
        setTenants(l.items);
        return api.watch(`${TENANTS}?watch=1&resourceVersion=${l.metadata.resourceVersion}`, 'application/json', (e) => {
          const t = e.object as Tenant;
          if (e.type === 'ERROR') return;
          setTenants((ts) => {
            const rest = (ts ?? []).filter((x) => x.metadata.name !== t.metadata.name);
            return e.type === 'DELETED' ? rest : [...rest, t].sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
          });
        }, abort.signal);
      })
      .then(() => {
        if (!abort.signal.aborted) timer = setTimeout(() => setRound((r) => r + 1), 1000);
      })
      .catch((e) => !abort.signal.aborted && setError(e));
    return () => {
      abort.abort();
      clearTimeout(timer);
    };
  }, [api.session.token, round]);
  return { tenants, error };
}

/** Asks for the tenant's name before deleting it (everything in it goes). */
function DeleteTenant({ api, name, onClose }: { api: Api; name: string; onClose: () => void }) {
  const [typed, setTyped] = useState('');
  const [error, setError] = useState<unknown>(null);
  return (
    <form
      class="confirm"
      aria-label={`Delete tenant ${name}`}
      onSubmit={(e) => {
        e.preventDefault();
        api.json(`${TENANTS}/${encodeURIComponent(name)}`, { method: 'DELETE' }).then(onClose, setError);
      }}
    >
      <p>
        Deleting tenant <strong>{name}</strong> removes everything in it. Type its name to confirm.
      </p>
      <label for="confirm-name">Tenant name</label>
      <input id="confirm-name" value={typed} onInput={(e) => setTyped(e.currentTarget.value)} />
      <button type="submit" class="danger" disabled={typed !== name}>
        Delete tenant
      </button>
      <button type="button" class="secondary outline" onClick={onClose}>
        Cancel
      </button>
      {error ? <Problem error={error} /> : null}
    </form>
  );
}
