import { useEffect, useState } from 'preact/hooks';
import { type Api, type KubeObject } from '../api.js';
import { resourcePath } from '../discovery.js';
import { href } from '../router.js';
import { editableYaml, parseApplyConfiguration, toYaml, withoutManagedFields } from '../object-yaml.js';
import { Problem } from './problem.js';
import { YamlDiff } from './yaml-diff.js';
import { EventsPanel } from './events-panel.js';

interface Props {
  api: Api;
  gv: string;
  resource: string;
  namespace: string;
  name: string;
}

/** The field manager of the console's server-side applies. */
export const FIELD_MANAGER = 'plinth-console';

/**
 * One object: its YAML (managedFields folded), edit through server-side
 * apply (a server dry run shows the diff and any conflicts first; 409
 * conflicts list each field with its manager; force takes them over),
 * its events, and delete with the cascade choice.
 */
export function ObjectView({ api, gv, resource, namespace, name }: Props) {
  const path = resourcePath(api, gv, resource, namespace || undefined, name);
  const [obj, setObj] = useState<KubeObject | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [editing, setEditing] = useState<string | null>(null);
  const [preview, setPreview] = useState<{ after: string } | null>(null);
  const [applyError, setApplyError] = useState<unknown>(null);
  const [saved, setSaved] = useState(false);
  const [deleting, setDeleting] = useState(false);
  const reload = () =>
    api.json<KubeObject>(path).then(
      (o) => {
        setObj(o);
        setError(null);
      },
      (e) => setError(e),
    );
  useEffect(() => {
    void reload();
  }, [path]);
  const apply = async (dryRun: boolean, force: boolean) => {
    setApplyError(null);
    setSaved(false);
    try {
      const body = JSON.stringify(parseApplyConfiguration(editing ?? ''));
      const q = new URLSearchParams({ fieldManager: FIELD_MANAGER });
      if (dryRun) q.set('dryRun', 'All');
      if (force) q.set('force', 'true');
      const result = await api.json<KubeObject>(`${path}?${q}`, { method: 'PATCH', contentType: 'application/apply-patch+yaml', body });
      if (dryRun) setPreview({ after: toYaml(withoutManagedFields(result)) });
      else {
        setObj(result);
        setEditing(null);
        setPreview(null);
        setSaved(true);
      }
    } catch (e) {
      setPreview(null);
      setApplyError(e);
    }
  };
  if (error) return <Problem error={error} />;
  if (!obj) return <p>Loading…</p>;
  const managed = obj.metadata.managedFields ?? [];
  return (
    <section aria-labelledby="object-title">
      <h1 id="object-title">
        {obj.kind} {namespace ? `${namespace}/` : ''}
        {name}
      </h1>
      <p class="crumbs">
        <a href={href(['r', gv, resource], { ns: namespace || undefined })}>Back to the list</a>
        {obj.metadata.deletionTimestamp && <strong class="terminating"> Terminating since {obj.metadata.deletionTimestamp}</strong>}
      </p>
      {saved && (
        <p class="ok" role="status">
          Saved (server-side apply as {FIELD_MANAGER}).
        </p>
      )}
      {editing === null ? (
        <>
          <div class="actions">
            <button type="button" onClick={() => setEditing(editableYaml(obj))}>
              Edit
            </button>
            <button type="button" class="danger" onClick={() => setDeleting(true)}>
              Delete
            </button>
          </div>
          {deleting && <DeleteDialog api={api} path={path} onDone={() => (location.hash = href(['r', gv, resource], { ns: namespace || undefined }))} onCancel={() => setDeleting(false)} />}
          <pre class="yaml" data-testid="yaml">
            {toYaml(withoutManagedFields(obj))}
          </pre>
          <details class="managed">
            <summary>managedFields ({managed.length} managers)</summary>
            <pre>{toYaml(managed)}</pre>
          </details>
        </>
      ) : (
        <div class="editor">
          <label for="editor">YAML to apply (server-side apply, field manager {FIELD_MANAGER})</label>
          <textarea id="editor" rows={20} spellcheck={false} value={editing} onInput={(e) => setEditing(e.currentTarget.value)} />
          <div class="actions">
            <button type="button" onClick={() => void apply(true, false)}>
              Preview changes (dry run)
            </button>
            {preview && (
              <button type="button" onClick={() => void apply(false, false)}>
                Save
              </button>
            )}
            {applyError ? (
              <button type="button" class="danger" onClick={() => void apply(false, true)}>
                Save and take over the fields (force)
              </button>
            ) : null}
            <button
              type="button"
              onClick={() => {
                setEditing(null);
                setPreview(null);
                setApplyError(null);
              }}
            >
              Cancel
            </button>
          </div>
          {applyError ? <Problem error={applyError} /> : null}
          {preview && <YamlDiff before={toYaml(withoutManagedFields(obj))} after={preview.after} />}
        </div>
      )}
      <EventsPanel api={api} obj={obj} />
    </section>
  );
}

function DeleteDialog({ api, path, onDone, onCancel }: { api: Api; path: string; onDone: () => void; onCancel: () => void }) {
  const [policy, setPolicy] = useState('Background');
  const [error, setError] = useState<unknown>(null);
  return (
    <form
      class="confirm"
      aria-label="Confirm deletion"
      onSubmit={(e) => {
        e.preventDefault();
        api
          .json(path, { method: 'DELETE', contentType: 'application/json', body: JSON.stringify({ kind: 'DeleteOptions', apiVersion: 'v1', propagationPolicy: policy }) })
          .then(onDone, setError);
      }}
    >
      <fieldset>
        <legend>Delete this object? Its dependents:</legend>
        {['Background', 'Foreground', 'Orphan'].map((p) => (
          <label key={p}>
            <input type="radio" name="cascade" value={p} checked={policy === p} onChange={() => setPolicy(p)} /> {p === 'Orphan' ? 'keep (orphan)' : `delete (${p.toLowerCase()})`}
          </label>
        ))}
      </fieldset>
      <button type="submit" class="danger">
        Delete
      </button>
      <button type="button" onClick={onCancel}>
        Cancel
      </button>
      {error ? <Problem error={error} /> : null}
    </form>
  );
}
