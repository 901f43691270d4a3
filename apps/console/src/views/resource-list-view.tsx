import { useState } from 'preact/hooks';
import type { Api } from '../api.js';
import { resourcePath, type ServedResource } from '../discovery.js';
import { href } from '../router.js';
import { useWatchedTable } from '../table-watch.js';
import { Problem } from './problem.js';
import { ServedGate } from './served-gate.js';

interface Props {
  api: Api;
  gv: string;
  resource: string;
  query: URLSearchParams;
}

const PAGE_SIZES = ['50', '200', '500', '5000'];


/**
 * A resource's list with the server's printer columns (Table API), in one
 * namespace or all, filtered by a label selector, paged with
 * limit/continue, kept current by a watch from the list's resourceVersion
 * (a change made with kubectl shows without reload).
 */
export function ResourceListView({ api, gv, resource, query }: Props) {
  return (
    <ServedGate api={api} gv={gv} resource={resource}>
      {(info) => <ServedList api={api} gv={gv} resource={resource} query={query} info={info} />}
    </ServedGate>
  );
}

/** `make()`'s path, or the error it threw (a namespace that cannot be a path segment) and no path. */
function pathOrError(make: () => string): { path: string; bad?: undefined } | { path: null; bad: unknown } {
  try {
    return { path: make() };
  } catch (err) {
    return { path: null, bad: err };
  }
}

/** The list of a resource discovery returned (`info`). */
function ServedList({ api, gv, resource, query, info }: Props & { info: ServedResource }) {
  const ns = query.get('ns') ?? '';
  const selector = query.get('l') ?? '';
  const limit = query.get('limit') ?? '200';
  const [pages, setPages] = useState<string[]>(['']);
  const cont = pages[pages.length - 1]!;
  const target = pathOrError(() => resourcePath(api, gv, resource, ns || undefined));
  const watched = useWatchedTable(api, target.path, selector, limit, cont);
  const { table, rows, live } = watched;
  const error = target.bad ?? watched.error;
  const namespaced = info.namespaced;
  const nav = (patch: Record<string, string>) => {
    location.hash = href(['r', gv, resource], { ns, l: selector, limit, ...patch });
  };
  const columns = (table?.columnDefinitions ?? []).map((c, i) => ({ ...c, i })).filter((c) => !c.priority);
  return (
    <section aria-labelledby="list-title">
      <h1 id="list-title">
        {info.kind} <small>{gv}</small>
      </h1>
      <form
        class="filters"
        onSubmit={(e) => {
          e.preventDefault();
          const f = new FormData(e.currentTarget);
          setPages(['']);
          nav({ ns: String(f.get('ns') ?? ''), l: String(f.get('l') ?? ''), limit: String(f.get('limit') ?? limit) });
        }}
      >
        {namespaced && (
          <>
            <label for="ns">Namespace</label>
            <input id="ns" name="ns" defaultValue={ns} placeholder="all namespaces" />
          </>
        )}
        <label for="l">Label selector</label>
        <input id="l" name="l" defaultValue={selector} placeholder="app=web,tier!=db" />
        <label for="limit">Page size</label>
        <select id="limit" name="limit">
          {PAGE_SIZES.map((s) => (
            <option key={s} value={s} selected={s === limit}>
              {s}
            </option>
          ))}
        </select>
        <button type="submit">Apply</button>
        <span class={live ? 'live on' : 'live'} data-testid="live">
          {live ? 'live' : 'not watching'}
        </span>
      </form>
      {error ? <Problem error={error} /> : null}
      {table && (
        <table class="list" data-testid="list">
          <thead>
            <tr>
              {columns.map((c) => (
                <th key={c.name} scope="col" title={c.description}>
                  {c.name}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {rows.map((r) => {
              const m = r.object?.metadata ?? {};
              return (
                <tr key={m.uid ?? m.name}>
                  {columns.map((c, j) => (
                    <td key={c.name}>{j === 0 ? <a href={href(['o', gv, resource, m.namespace || '_', m.name ?? ''])}>{String(r.cells[c.i] ?? '')}</a> : String(r.cells[c.i] ?? '')}</td>
                  ))}
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
      <p class="pager">
        <span data-testid="count">{rows.length} shown</span>
        {pages.length > 1 && (
          <button type="button" onClick={() => setPages(pages.slice(0, -1))}>
            Previous page
          </button>
        )}
        {table?.metadata.continue && (
          <button type="button" onClick={() => setPages([...pages, table.metadata.continue!])}>
            Next page
          </button>
        )}
      </p>
    </section>
  );
}
