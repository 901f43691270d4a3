import { useState } from 'preact/hooks';
import { type Api, ApiFailure } from '../api.js';
import { Problem } from './problem.js';

const TENANTS = '/apis/tenancy.plinth.dev/v1beta1/tenants';

const LIMITS = ['objects', 'bytes', 'customResourceDefinitions', 'webhookConfigurations', 'concurrentRequests', 'requestsPerSecond'] as const;

/** A number when `s` is an integer, else the text as typed (the server judges it). */
function value(s: string): number | string {
  return /^-?\d+$/.test(s.trim()) ? Number(s) : s.trim();
}

/** The Tenant the form describes. */
function tenantOf(f: FormData): Record<string, unknown> {
  const owners = String(f.get('owners') ?? '')
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .map((l) => {
      const [kind, ...name] = l.split(':');
      return name.length ? { kind: kind!.trim(), name: name.join(':').trim() } : { kind: 'User', name: l };
    });
  const limits: Record<string, unknown> = {};
  for (const k of LIMITS) {
    const v = String(f.get(k) ?? '');
    if (v.trim()) limits[k] = value(v);
  }
  const per: Record<string, unknown> = {};
  for (const l of String(f.get('objectsPerResource') ?? '').split('\n')) {
    const [r, n] = l.split('=');
    if (r?.trim() && n !== undefined) per[r.trim()] = value(n);
  }
  if (Object.keys(per).length) limits['objectsPerResource'] = per;
  return { apiVersion: 'tenancy.plinth.dev/v1beta1', kind: 'Tenant', metadata: { name: String(f.get('name') ?? '').trim() }, spec: { owners, limits } };
}

/**
 * Creates a Tenant: a server dry run first (its validation errors shown
 * at the field they name), then the real create once the dry run passed.
 */
export function TenantForm({ api }: { api: Api }) {
  const [error, setError] = useState<unknown>(null);
  const [checked, setChecked] = useState<string | null>(null);
  const [created, setCreated] = useState<string | null>(null);
  const causes = error instanceof ApiFailure ? error.causes : [];
  const fieldError = (field: string) => {
    const c = causes.filter((x) => x.field === field || x.field?.startsWith(`${field}.`) || x.field?.startsWith(`${field}[`));
    return c.length ? (
      <span class="field-error" id={`err-${field}`} role="alert">
        {c.map((x) => `${x.field}: ${x.message}`).join('; ')}
      </span>
    ) : null;
  };
  const submit = (dry: boolean) => (e: Event) => {
    e.preventDefault();
    const form = (e.target as HTMLElement).closest('form')!;
    const body = JSON.stringify(tenantOf(new FormData(form)));
    setCreated(null);
    api
      .json<{ metadata: { name: string } }>(`${TENANTS}${dry ? '?dryRun=All' : ''}`, { method: 'POST', contentType: 'application/json', body })
      .then((t) => {
        setError(null);
        if (dry) setChecked(body);
        else {
          setChecked(null);
          setCreated(t.metadata.name);
        }
      })
      .catch((err) => {
        setChecked(null);
        setError(err);
      });
  };
  return (
    <form class="tenant-form" aria-labelledby="new-tenant" onSubmit={submit(true)} onInput={() => setChecked(null)}>
      <h2 id="new-tenant">New tenant</h2>
      <label for="t-name">Name</label>
      <input id="t-name" name="name" required />
      {fieldError('metadata.name')}
      <label for="t-owners">Owners (one per line: User:alice or Group:admins)</label>
      <textarea id="t-owners" name="owners" rows={3} />
      {fieldError('spec.owners')}
      <fieldset>
        <legend>Limits</legend>
        {LIMITS.map((k) => (
          <div key={k} class="field">
            <label for={`t-${k}`}>{k}</label>
            <input id={`t-${k}`} name={k} />
            {fieldError(`spec.limits.${k}`)}
          </div>
        ))}
        <label for="t-per">objectsPerResource (one per line: configmaps=100)</label>
        <textarea id="t-per" name="objectsPerResource" rows={2} />
        {fieldError('spec.limits.objectsPerResource')}
      </fieldset>
      <button type="submit">Check (dry run)</button>
      {checked && (
        <button type="button" onClick={submit(false)}>
          Create
        </button>
      )}
      {checked && (
        <p class="ok" role="status">
          The server accepts this tenant.
        </p>
      )}
      {created && (
        <p class="ok" role="status">
          Tenant {created} created.
        </p>
      )}
      {error ? <Problem error={error} /> : null}
    </form>
  );
}
