import { useEffect, useState } from 'preact/hooks';
import type { Api } from './api.js';
import { applyEvent, type Table, TABLE_ACCEPT, type TableRow } from './table.js';

/** A listed page of a resource kept current by a watch. */
export interface WatchedTable {
  table: Table | null;
  rows: TableRow[];
  error: unknown;
  /** Whether the watch is running. */
  live: boolean;
}

/**
 * Lists one page of `path` as a Table (`limit`, `continue`, label
 * `selector`), then watches from the list's resourceVersion with the same
 * selector and applies each event to the rows (new objects are added only
 * on the last page). Restarts when an argument changes or the watch
 * ends by itself (a second later, from a fresh list); stops on unmount. A
 * failed list or watch stops and shows its error. A null `path` (not a
 * path the console may call) calls nothing.
 */
export function useWatchedTable(api: Api, path: string | null, selector: string, limit: string, cont: string): WatchedTable {
  const [table, setTable] = useState<Table | null>(null);
  const [rows, setRows] = useState<TableRow[]>([]);
  const [error, setError] = useState<unknown>(null);
  const [live, setLive] = useState(false);
  // Bumped when a watch ends by itself (server timeout, 410 Gone, network): the list is taken again and watched anew.
  const [round, setRound] = useState(0);
  useEffect(() => {
    const abort = new AbortController();
    let timer: ReturnType<typeof setTimeout> | undefined;
    setError(null);
    setLive(false);
    if (path === null) return () => abort.abort();
    const q = new URLSearchParams({ limit });
    if (selector) q.set('labelSelector', selector);
    if (cont) q.set('continue', cont);
    api
      .json<Table>(`${path}?${q}`, { accept: TABLE_ACCEPT, signal: abort.signal })
      .then((t) => {
        setTable(t);
        setRows(t.rows ?? []);
        const w = new URLSearchParams({ watch: '1', resourceVersion: t.metadata.resourceVersion ?? '0' });
        if (selector) w.set('labelSelector', selector);
        setLive(true);
        const lastPage = !t.metadata.continue;
        return api
          .watch(`${path}?${w}`, TABLE_ACCEPT, (e) => {
            if (e.type !== 'ERROR') setRows((rs) => applyEvent(rs, e.type, e.object as Table, lastPage));
          }, abort.signal)
          .then(() => {
            if (!abort.signal.aborted) timer = setTimeout(() => setRound((r) => r + 1), 1000);
          });
      })
      .catch((e) => {
        if (!abort.signal.aborted) setError(e);
      })
      .finally(() => {
        if (!abort.signal.aborted) setLive(false);
      });
    return () => {
      abort.abort();
      clearTimeout(timer);
    };
  }, [path, selector, limit, cont, round]);
  return { table, rows, error, live };
}
