import { useEffect, useState } from 'preact/hooks';
import type { Api } from '../api.js';
import { Problem } from './problem.js';

const TENANTS = '/apis/tenancy.plinth.dev/v1beta1/tenants';

/** One snapshot in the snapshot target (the Tenant's `snapshots` subresource). */
interface SnapshotItem {
  location: string;
  bytes: number;
  time: string;
  scheduled: boolean;
}

interface SnapshotList {
  target: string | null;
  items: SnapshotItem[];
}

function size(bytes: number): string {
  return bytes < 1024 ? `${bytes} B` : bytes < 1024 * 1024 ? `${(bytes / 1024).toFixed(1)} KiB` : `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

/**
 * A tenant's snapshots in the snapshot target (PLINTH_SNAPSHOT_DIR or
 * PLINTH_SNAPSHOT_S3_URL), newest first, each with a Restore button: it
 * asks for a new tenant's name (and, for a snapshot whose Secrets are
 * sealed, the platform Secret holding the age identity) and creates that
 * Tenant with `spec.source`; the restore's progress then shows as the new
 * tenant's SourceRestored condition in the list.
 */
export function TenantSnapshots({ api, tenant, onClose }: { api: Api; tenant: string; onClose: () => void }) {
  const [list, setList] = useState<SnapshotList | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [restoring, setRestoring] = useState<string | null>(null);
  useEffect(() => {
    const abort = new AbortController();
    api.json<SnapshotList>(`${TENANTS}/${encodeURIComponent(tenant)}/snapshots`, { signal: abort.signal }).then(setList, (e) => !abort.signal.aborted && setError(e));
    return () => abort.abort();
  }, [tenant]);
  return (
    <section class="snapshots" aria-labelledby="snapshots-title" data-testid="snapshots">
      <h2 id="snapshots-title">Snapshots of {tenant}</h2>
      {error ? <Problem error={error} /> : null}
      {list && list.target === null && <p class="note">No snapshot target is configured (PLINTH_SNAPSHOT_DIR or PLINTH_SNAPSHOT_S3_URL).</p>}
      {list && list.target !== null && list.items.length === 0 && <p class="note">No snapshots of {tenant} in {list.target} yet.</p>}
      {list && list.items.length > 0 && (
        <table class="list" data-testid="snapshot-list">
          <caption class="note">In {list.target}, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Taken</th>
              <th scope="col">Location</th>
              <th scope="col">Size</th>
              <th scope="col">
                <span class="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {list.items.map((s) => (
              <tr key={s.location} data-snapshot={s.location}>
                <td>{s.time}</td>
                <td>
                  <code>{s.location}</code>
                </td>
                <td>{size(s.bytes)}</td>
                <td>
                  <button type="button" class="small" onClick={() => setRestoring(s.location)} aria-label={`Restore ${s.location}`}>
                    Restore…
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {restoring && <RestoreForm api={api} location={restoring} onDone={() => setRestoring(null)} />}
      <button type="button" class="secondary outline" onClick={onClose}>
        Close
      </button>
    </section>
  );
}

/** Creates a new Tenant whose spec.source is the snapshot at `location`. */
function RestoreForm({ api, location, onDone }: { api: Api; location: string; onDone: () => void }) {
  const [name, setName] = useState('');
  const [identity, setIdentity] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [created, setCreated] = useState<string | null>(null);
  const submit = (e: Event) => {
    e.preventDefault();
    const [ns, secret] = identity.trim().split('/');
    const source = { snapshot: location, ...(ns && secret ? { identitySecretRef: { namespace: ns, name: secret } } : {}) };
    const body = JSON.stringify({ apiVersion: 'tenancy.plinth.dev/v1beta1', kind: 'Tenant', metadata: { name: name.trim() }, spec: { source } });
    api.json<{ metadata: { name: string } }>(TENANTS, { method: 'POST', contentType: 'application/json', body }).then(
      (t) => {
        setError(null);
        setCreated(t.metadata.name);
      },
      setError,
    );
  };
  return (
    <form class="confirm" aria-label={`Restore ${location}`} onSubmit={submit}>
      <p>
        Restore <code>{location}</code> into a new tenant.
      </p>
      <label for="restore-name">New tenant name</label>
      <input id="restore-name" value={name} required onInput={(e) => setName(e.currentTarget.value)} />
      <label for="restore-identity">Identity Secret for sealed Secrets (namespace/name of the platform scope, key "identity"; optional)</label>
      <input id="restore-identity" value={identity} onInput={(e) => setIdentity(e.currentTarget.value)} />
      <button type="submit" disabled={!name.trim()}>
        Restore
      </button>
      <button type="button" class="secondary outline" onClick={onDone}>
        Cancel
      </button>
      {created && (
        <p class="ok" role="status">
          Tenant {created} created; restoring from {location} (see its SourceRestored condition).
        </p>
      )}
      {error ? <Problem error={error} /> : null}
    </form>
  );
}
