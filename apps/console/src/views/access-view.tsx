import { useEffect, useState } from 'preact/hooks';
import type { Api } from '../api.js';
import { href } from '../router.js';
import { Problem } from './problem.js';

interface Rules {
  resourceRules: { verbs: string[]; apiGroups?: string[]; resources?: string[]; resourceNames?: string[] }[];
  nonResourceRules: { verbs: string[]; nonResourceURLs?: string[] }[];
  incomplete: boolean;
  evaluationError?: string;
}

/** "What can I do here": the user's rules in a namespace, from SelfSubjectRulesReview. */
export function AccessView({ api, namespace }: { api: Api; namespace: string }) {
  const [rules, setRules] = useState<Rules | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    setRules(null);
    api
      .json<{ status: Rules }>(api.t('/apis/authorization.k8s.io/v1/selfsubjectrulesreviews'), {
        method: 'POST',
        contentType: 'application/json',
        body: JSON.stringify({ apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectRulesReview', spec: { namespace } }),
      })
      .then((r) => setRules(r.status), setError);
  }, [namespace]);
  return (
    <section aria-labelledby="access-title">
      <h1 id="access-title">What can I do in namespace {namespace}</h1>
      <form
        class="filters"
        onSubmit={(e) => {
          e.preventDefault();
          location.hash = href(['access'], { ns: String(new FormData(e.currentTarget).get('ns') ?? 'default') });
        }}
      >
        <label for="access-ns">Namespace</label>
        <input id="access-ns" name="ns" defaultValue={namespace} />
        <button type="submit">Show</button>
      </form>
      {error ? <Problem error={error} /> : null}
      {rules && (
        <table class="list" data-testid="rules">
          <thead>
            <tr>
              <th scope="col">Verbs</th>
              <th scope="col">API groups</th>
              <th scope="col">Resources</th>
              <th scope="col">Names</th>
            </tr>
          </thead>
          <tbody>
            {rules.resourceRules.map((r, i) => (
              <tr key={i}>
                <td>{r.verbs.join(', ')}</td>
                <td>{(r.apiGroups ?? []).map((g) => g || 'core').join(', ')}</td>
                <td>{(r.resources ?? []).join(', ')}</td>
                <td>{(r.resourceNames ?? []).join(', ')}</td>
              </tr>
            ))}
            {rules.nonResourceRules.map((r, i) => (
              <tr key={`n${i}`}>
                <td>{r.verbs.join(', ')}</td>
                <td>(non-resource)</td>
                <td>{(r.nonResourceURLs ?? []).join(', ')}</td>
                <td />
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {rules?.incomplete && <p class="note">The list is incomplete: {rules.evaluationError}</p>}
    </section>
  );
}
