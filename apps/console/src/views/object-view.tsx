import { useEffect, useState } from 'preact/hooks';
import type { Api, KubeObject } from '../api.js';
import { resourcePath } from '../discovery.js';
import { href } from '../router.js';
import { toYaml, withoutManagedFields } from '../object-yaml.js';
import { EventsPanel } from './events-panel.js';
import { FIELD_MANAGER, ObjectEditor } from './object-editor.js';
import { Problem } from './problem.js';
import { ServedGate } from './served-gate.js';

interface Props {
  api: Api;
  gv: string;
  resource: string;
  namespace: string;
  name: string;
}

/**
 * One object: its YAML (managedFields folded), edit through server-side
 * apply ({@link ObjectEditor}), its events, and delete with the cascade
 * choice.
 */
export function ObjectView(props: Props) {
  return (
    <ServedGate api={props.api} gv={props.gv} resource={props.resource}>
      {() => <ServedObject {...props} />}
    </ServedGate>
  );
}

/** One object of a resource discovery returned; a namespace or name that cannot be a path segment shows a problem and calls nothing. */
function ServedObject(props: Props) {
  let path: string;
  try {
    path = resourcePath(props.api, props.gv, props.resource, props.namespace || undefined, props.name ?? '');
  } catch (err) {
    return <Problem error={err} />;
  }
  return <ObjectOf {...props} path={path} />;
}

function ObjectOf({ api, gv, resource, namespace, name, path }: Props & { path: string }) {
  const list = href(['r', gv, resource], { ns: namespace || undefined });
  const [obj, setObj] = useState<KubeObject | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [editing, setEditing] = useState(false);
  const [saved, setSaved] = useState(false);
  const [deleting, setDeleting] = useState(false);
  useEffect(() => {
    api.json<KubeObject>(path).then(setObj, setError);
  }, [path]);
  if (error) return <Problem error={error} />;
  if (!obj) return <p>Loading…</p>;
  return (
    <section aria-labelledby="object-title">
      <h1 id="object-title">
        {obj.kind} {namespace ? `${namespace}/` : ''}
        {name}
      </h1>
      <p class="crumbs">
        <a href={list}>Back to the list</a>
        {obj.metadata.deletionTimestamp && <strong class="terminating"> Terminating since {obj.metadata.deletionTimestamp}</strong>}
      </p>
      {saved && (
        <p class="ok" role="status">
          Saved (server-side apply as {FIELD_MANAGER}).
        </p>
      )}
      {editing ? (
        <ObjectEditor
          api={api}
          path={path}
          obj={obj}
          onSaved={(o) => {
            setObj(o);
            setEditing(false);
            setSaved(true);
          }}
          onCancel={() => setEditing(false)}
        />
      ) : (
        <>
          <div class="actions">
            <button
              type="button"
              onClick={() => {
                setSaved(false);
                setEditing(true);
              }}
            >
              Edit
            </button>
            <button type="button" class="danger" onClick={() => setDeleting(true)}>
              Delete
            </button>
          </div>
          {deleting && <DeleteDialog api={api} path={path} onDone={() => (location.hash = list)} onCancel={() => setDeleting(false)} />}
          <pre class="yaml" data-testid="yaml">
            {toYaml(withoutManagedFields(obj))}
          </pre>
          <details class="managed">
            <summary>managedFields ({(obj.metadata.managedFields ?? []).length} managers)</summary>
            <pre>{toYaml(obj.metadata.managedFields ?? [])}</pre>
          </details>
        </>
      )}
      <EventsPanel api={api} obj={obj} />
    </section>
  );
}

/** Confirms a delete and sends it with the chosen propagation policy (the cascade: background, foreground, or orphan the dependents). */
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
      <button type="button" class="secondary outline" onClick={onCancel}>
        Cancel
      </button>
      {error ? <Problem error={error} /> : null}
    </form>
  );
}
