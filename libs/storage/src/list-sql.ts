import { type RawBuilder, sql } from 'kysely';
import type { ListCursor, ListQuery } from './object-list.repository.js';
import { selectorSql } from './selector-sql.js';

// SQL pieces shared by the reads of a list at the newest revision (ObjectListRepository) and at a past one (PastStateReader).

/** A row of a list's state, as both reads return it. */
export interface StateRow {
  namespace: string;
  name: string;
  revision: number;
  body: Record<string, unknown>;
  total: number | null;
  /** The body's stored size in bytes (pg_column_size: compressed when PostgreSQL compressed it). */
  size: number;
  /** With a byte cap: how many rows the statement read before the cap dropped the rest (NULL without one). */
  scanned?: number | null;
}

/** An object row's labels: exactly the expression migration 0019's GIN index covers (plinth_labels), so that label selectors use it, under row-level security too. */
export const OBJECT_LABELS = sql`plinth_labels(body)`;

/**
 * remainingItemCount is counted up to this many items after the cursor;
 * beyond it the field is left out (it is optional, and upstream leaves it
 * out too when it cannot know it cheaply). Counting everything made each
 * page of a million-object list scan the whole list (about 3 s a page).
 */
export const REMAINING_COUNT_CAP = 10_000;

/** The conditions of a list on a row: its selectors (on `labels`), its namespace, and after the cursor. */
export function keyFilters(q: ListQuery, labels: RawBuilder<unknown>, after: ListCursor | undefined): RawBuilder<boolean> {
  const parts: RawBuilder<boolean>[] = [
    selectorSql(labels, sql.ref('namespace'), sql.ref('name'), q.labelRequirements, q.fieldRequirements),
  ];
  if (q.namespace !== undefined) parts.push(sql<boolean>`namespace = ${q.namespace}`);
  if (after) parts.push(afterCursor(q, after, sql.ref('namespace'), sql.ref('name')));
  return sql<boolean>`${sql.join(parts, sql` AND `)}`;
}

/**
 * The condition "after the cursor" in key order. Within one namespace it is
 * `name > cursor name`: the row comparison `(namespace, name) > (…)` next to
 * `namespace = …` made PostgreSQL start the primary key scan at the
 * namespace's first key and filter its way to the cursor (95 ms for a page
 * 900,000 keys into a namespace instead of 0.1 ms).
 */
export function afterCursor(q: ListQuery, after: ListCursor, namespaceCol: RawBuilder<unknown>, nameCol: RawBuilder<unknown>): RawBuilder<boolean> {
  if (q.namespace !== undefined && after.namespace === q.namespace) return sql<boolean>`${nameCol} > ${after.name}`;
  return sql<boolean>`(${namespaceCol}, ${nameCol}) > (${after.namespace}, ${after.name})`;
}

/**
 * For a list across namespaces that selects one name (`metadata.name=`):
 * the condition on migration 0011's hashed name index (the name itself is
 * compared by the selector too). Nothing otherwise: within one namespace
 * the primary key finds the name.
 */
export function nameLookup(q: ListQuery): RawBuilder<unknown> {
  const byName = q.namespace === undefined ? q.fieldRequirements?.find((f) => f.field === 'metadata.name' && f.operator === '=') : undefined;
  return byName ? sql`AND plinth_hash(tenant, resource, name) = plinth_hash(${q.tenant}::text, ${q.resource}::text, ${byName.value}::text)` : sql``;
}
