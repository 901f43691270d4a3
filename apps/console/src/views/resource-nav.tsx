import { useEffect, useState } from 'preact/hooks';
import { type Api, messageOf } from '../api.js';
import { type ServedResource, servedResources } from '../discovery.js';
import { href } from '../router.js';

/** Every served resource from discovery, grouped by API group (core first), each a link to its list. */
export function ResourceNav({ api, current }: { api: Api; current?: string }) {
  const [resources, setResources] = useState<ServedResource[] | string | null>(null);
  useEffect(() => {
    servedResources(api).then(setResources, (e) => setResources(messageOf(e)));
  }, [api.session.token]);
  if (resources === null) return <p aria-busy="true">Loading resources…</p>;
  if (typeof resources === 'string') return <p class="error">{resources}</p>;
  const groups = new Map<string, ServedResource[]>();
  for (const r of resources) groups.set(r.group, [...(groups.get(r.group) ?? []), r]);
  return (
    <div class="resources">
      <h2>Resources</h2>
      {[...groups.entries()].map(([group, rs]) => (
        <details key={group} open={group === '' || group === 'apps' || rs.some((r) => `${r.gv}/${r.name}` === current)}>
          <summary title={group || 'core'}>
            <span>{group || 'core'}</span>
          </summary>
          <ul>
            {rs.map((r) => (
              <li key={r.name}>
                <a href={href(['r', r.gv, r.name])} aria-current={`${r.gv}/${r.name}` === current ? 'page' : undefined}>
                  {r.kind}
                </a>
              </li>
            ))}
          </ul>
        </details>
      ))}
    </div>
  );
}
