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
 * on the last page). Restarts when an argument changes; stops on unmount.
 */
export function useWatchedTable(api: Api, path: string, selector: string, limit: string, cont: string): WatchedTable {
  const [table, setTable] = useState<Table | null>(null);
  const [rows, setRows] = useState<TableRow[]>([]);
  const [error, setError] = useState<unknown>(null);
  const [live, setLive] = useState(false);
  useEffect(() => {
    const abort = new AbortController();
    setError(null);
    setLive(false);
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
        return api.watch(`${path}?${w}`, TABLE_ACCEPT, (e) => {
          if (e.type !== 'ERROR') setRows((rs) => applyEvent(rs, e.type, e.object as Table, lastPage));
        }, abort.signal);
      })
      .catch((e) => {
        if (!abort.signal.aborted) setError(e);
      })
      .finally(() => {
        if (!abort.signal.aborted) setLive(false);
      });
    return () => abort.abort();
  }, [path, selector, limit, cont]);
  return { table, rows, error, live };
}
