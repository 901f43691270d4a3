/** The Table API (meta.k8s.io/v1 Table): server-side printer columns. */

/** A column of a Table. */
export interface TableColumn {
  name: string;
  type: string;
  priority?: number;
  description?: string;
}

/** A row of a Table; `object` is the row's PartialObjectMetadata. */
export interface TableRow {
  cells: unknown[];
  object?: { metadata?: { name?: string; namespace?: string; uid?: string; resourceVersion?: string } };
}

/** A Table answer. */
export interface Table {
  columnDefinitions: TableColumn[];
  rows: TableRow[];
  metadata: { resourceVersion?: string; continue?: string; remainingItemCount?: number };
}

/** The Accept header asking for a Table (kubectl's), falling back to JSON lists. */
export const TABLE_ACCEPT = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json';

/** A row's identity: its uid, else namespace/name. */
export function rowKey(r: TableRow): string {
  const m = r.object?.metadata ?? {};
  return m.uid ?? `${m.namespace ?? ''}/${m.name ?? ''}`;
}

/**
 * Applies one watch event to `rows`: ADDED/MODIFIED replace the row with
 * the same key or (when `append`) add it; DELETED removes it. Returns a
 * new array (rows are immutable for rendering).
 */
export function applyEvent(rows: TableRow[], type: string, table: Table, append: boolean): TableRow[] {
  let out = rows;
  for (const row of table.rows ?? []) {
    const key = rowKey(row);
    const i = out.findIndex((r) => rowKey(r) === key);
    if (type === 'DELETED') {
      if (i >= 0) out = [...out.slice(0, i), ...out.slice(i + 1)];
    } else if (i >= 0) {
      out = [...out.slice(0, i), row, ...out.slice(i + 1)];
    } else if (append && (type === 'ADDED' || type === 'MODIFIED')) {
      out = [...out, row];
    }
  }
  return out;
}
