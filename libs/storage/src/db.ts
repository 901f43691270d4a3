import { type Generated, Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';

/** Row of `tenants`. */
export interface TenantsTable {
  name: string;
  uid: string;
  created_at: Generated<Date>;
}

/** The single row of `revision_counter`: the newest committed revision. */
export interface RevisionCounterTable {
  id: number;
  value: number;
}

/** The single row of `compaction_state`: changes at or below it may be gone. */
export interface CompactionStateTable {
  id: number;
  compacted_revision: number;
}

/** Row of `objects`: the current state of one object. */
export interface ObjectsTable {
  tenant: string;
  resource: string;
  namespace: string;
  name: string;
  revision: number;
  body: Record<string, unknown>;
  labels: Generated<Record<string, string>>;
}

/** Row of `changes`: one committed change, `type` A(dded), M(odified) or D(eleted). */
export interface ChangesTable {
  revision: number;
  tenant: string;
  resource: string;
  namespace: string;
  name: string;
  type: 'A' | 'M' | 'D';
  object: Record<string, unknown>;
  prev_object: Record<string, unknown> | null;
  prev_revision: number | null;
  created_at: Generated<Date>;
}

/** The database as Kysely sees it. */
export interface DB {
  tenants: TenantsTable;
  revision_counter: RevisionCounterTable;
  compaction_state: CompactionStateTable;
  objects: ObjectsTable;
  changes: ChangesTable;
}

// bigint columns hold revisions, far below 2^53; numbers are what callers want.
pg.types.setTypeParser(20, (v: string) => Number(v));

/** Options for {@link createDatabase}. */
export interface DatabaseOptions {
  connectionString: string;
  maxConnections?: number;
  /** Called for errors on idle pool clients (e.g. the server restarted); the pool recovers by itself. */
  onPoolError?: (err: Error) => void;
}

/** Opens a pooled Kysely handle. The caller owns it and must `destroy()` it. */
export function createDatabase(opts: DatabaseOptions): Kysely<DB> {
  const pool = new pg.Pool({
    connectionString: opts.connectionString,
    max: opts.maxConnections ?? 20,
    connectionTimeoutMillis: 5000,
  });
  pool.on('error', (err) => opts.onPoolError?.(err));
  return new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
}
