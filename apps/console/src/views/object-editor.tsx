import { useState } from 'preact/hooks';
import type { Api, KubeObject } from '../api.js';
import { editableYaml, parseApplyConfiguration, toYaml, withoutManagedFields } from '../object-yaml.js';
import { Problem } from './problem.js';
import { YamlDiff } from './yaml-diff.js';

/** The field manager of the console's server-side applies. */
export const FIELD_MANAGER = 'plinth-console';

interface Props {
  api: Api;
  /** The object's URL path. */
  path: string;
  obj: KubeObject;
  onSaved: (o: KubeObject) => void;
  onCancel: () => void;
}

/**
 * Edits `obj` through server-side apply as {@link FIELD_MANAGER}: "Preview"
 * is a `dryRun=All` apply whose result is diffed against the object; a 409
 * shows each conflicting field with its manager, and force takes them over.
 */
export function ObjectEditor({ api, path, obj, onSaved, onCancel }: Props) {
  const [text, setText] = useState(() => editableYaml(obj));
  const [preview, setPreview] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const apply = async (dryRun: boolean, force: boolean) => {
    setError(null);
    try {
      const body = JSON.stringify(parseApplyConfiguration(text));
      const q = new URLSearchParams({ fieldManager: FIELD_MANAGER });
      if (dryRun) q.set('dryRun', 'All');
      if (force) q.set('force', 'true');
      const result = await api.json<KubeObject>(`${path}?${q}`, { method: 'PATCH', contentType: 'application/apply-patch+yaml', body });
      if (dryRun) setPreview(toYaml(withoutManagedFields(result)));
      else onSaved(result);
    } catch (e) {
      setPreview(null);
      setError(e);
    }
  };
  return (
    <div class="editor">
      <label for="editor">YAML to apply (server-side apply, field manager {FIELD_MANAGER})</label>
      <textarea
        id="editor"
        rows={20}
        spellcheck={false}
        value={text}
        onInput={(e) => {
          setText(e.currentTarget.value);
          setPreview(null);
        }}
      />
      <div class="actions">
        <button type="button" onClick={() => void apply(true, false)}>
          Preview changes (dry run)
        </button>
        {preview !== null && (
          <button type="button" onClick={() => void apply(false, false)}>
            Save
          </button>
        )}
        {error ? (
          <button type="button" class="danger" onClick={() => void apply(false, true)}>
            Save and take over the fields (force)
          </button>
        ) : null}
        <button type="button" class="secondary outline" onClick={onCancel}>
          Cancel
        </button>
      </div>
      {error ? <Problem error={error} /> : null}
      {preview !== null && <YamlDiff before={toYaml(withoutManagedFields(obj))} after={preview} />}
    </div>
  );
}
