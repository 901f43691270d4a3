import type { Generated, Kysely } from 'kysely';
import pg from 'pg';
import { platformHandle, poolOf } from './tenant-scope.js';
import { sendMarkedQueriesNamed } from './prepared-statements.js';
import { HostListClient, hostListConnector, usesHostList } from './host-list-connector.js';
import { installStatementDeadline, type StatementDeadlineOptions } from './statement-deadline.js';

/** Row of `tenants`. */
export interface TenantsTable {
  name: string;
  uid: string;
  created_at: Generated<Date>;
  /** 'Active', or 'Terminating' once its deletion has begun (writes are refused). */
  phase: 'Active' | 'Terminating';
  /** The newest revision when the tenant was created. */
  created_revision: number;
  /** A move is switching the tenant to another shard: its writes here are refused (migration 0014). */
  fenced: Generated<boolean>;
  /** From this revision on, this shard holds the tenant's changes as they happen; below it, copies (migration 0014). */
  arrived_revision: Generated<number>;
  /** The oldest revision of the tenant's history this shard holds: older watches and lists are Expired. */
  history_floor: Generated<number>;
  /** The generation of the move, sweep or deletion that last took this row over; steps of older ones fail (migration 0021). */
  move_epoch: Generated<number>;
  /** The uid of the Tenant object the row was created for (NULL: from before migration 0021). */
  object_uid: string | null;
}

/** The single row of `revision_counter`: the newest committed revision. */
export interface RevisionCounterTable {
  id: number;
  value: number;
  /** The counter may not pass it (null: no ceiling); raised ahead by the revision fence (migration 0022). */
  ceiling: Generated<number | null>;
}

/** Row of `revision_epochs`: a timeline fenced to serve writes, and the revisions its history lacks (migration 0022). */
export interface RevisionEpochsTable {
  timeline: number;
  system_identifier: string;
  counter_found: number;
  raised_to: number;
  fenced_at: Generated<Date>;
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
}

/** Row of `changes`: one committed change, `type` A(dded), M(odified) or D(eleted). */
export interface ChangesTable {
  revision: number;
  tenant: string;
  resource: string;
  namespace: string;
  name: string;
  type: 'A' | 'M' | 'D';
  /** The new state: only in rows written before migration 0010; newer rows derive it (see ChangeLogRepository). */
  object: Record<string, unknown> | null;
  prev_object: Record<string, unknown> | null;
  prev_revision: number | null;
  /** Labels of the new and previous state, scoped and indexed for label-selected catch-up (migration 0018; set by a trigger). */
  labels: Generated<unknown[] | null>;
  created_at: Generated<Date>;
}

/** The database as Kysely sees it. */
/** Row of `tenant_usage`: a tenant's objects and stored bytes under one usage key, kept by every write, and its limits there. */
export interface TenantUsageTable {
  tenant: string;
  /** '' (everything), a storage resource, or a category (`webhookconfigurations`). */
  usage_key: string;
  objects: Generated<number>;
  bytes: Generated<number>;
  /** The most objects and bytes allowed under this key (null: no limit). */
  max_objects: number | null;
  max_bytes: number | null;
}

/** Row of `quota_usage`: one ResourceQuota's count of one resource in its namespace, and its hard limit. */
export interface QuotaUsageTable {
  tenant: string;
  namespace: string;
  resource: string;
  quota: string;
  hard_name: string;
  objects: number;
  max_objects: number;
}

export interface DB {
  quota_usage: QuotaUsageTable;
  tenants: TenantsTable;
  tenant_usage: TenantUsageTable;
  revision_counter: RevisionCounterTable;
  revision_epochs: RevisionEpochsTable;
  compaction_state: CompactionStateTable;
  objects: ObjectsTable;
  changes: ChangesTable;
}

// bigint columns hold revisions, far below 2^53; numbers are what callers want.
pg.types.setTypeParser(20, (v: string) => Number(v));

/** A pooled handle on Plinth's database; callers outside libs/storage name it by this type, not Kysely's. */
export type Database = Kysely<DB>;

/** Options for {@link createDatabase}. */
export interface DatabaseOptions {
  connectionString: string;
  maxConnections?: number;
  /**
   * Called for connection errors of pool clients, idle or checked out (e.g.
   * the server restarted); the pool drops the broken client and recovers by itself.
   */
  onPoolError?: (err: Error) => void;
  /** How long a request waits for a connection before failing (ms, default 5000). */
  connectionTimeoutMs?: number;
  /**
   * Whether handles from tenantScoped() run as the request role under
   * row-level security (default true; PLINTH_ROW_LEVEL_SECURITY=off).
   */
  rowSecurity?: boolean;
  /**
   * When a statement with no answer gets its server checked, and how long
   * that check may take; a server that does not answer has the session
   * abandoned (statement-deadline.ts). Default 2000 and 1000 ms.
   */
  statementDeadline?: StatementDeadlineOptions;
  /**
   * Run on every new connection after the session settings; when it throws,
   * the connection is ended and the checkout fails (a read replica's check
   * that its server holds the primary's history, standby-reads.ts).
   */
  onConnect?: (client: pg.ClientBase) => Promise<void>;
}

/** The default {@link DatabaseOptions.statementDeadline}: a frozen server holds a statement for about 3 s at most. */
export const DEFAULT_STATEMENT_DEADLINE: StatementDeadlineOptions = { afterMs: 2000, checkTimeoutMs: 1000 };

/**
 * Run once on every new connection: the durability barrier (`plinth_flush()`)
 * flushes the WAL only when its session commits synchronously, and an
 * external server, role or database may set `synchronous_commit = off`, which
 * would silently make 2xx writes lose durability. `off` becomes `on`; `local`,
 * `on`, `remote_write` and `remote_apply` (all flush locally at least) stay.
 * A session-level SET overrides every server, database and role default.
 */
const SYNCHRONOUS_COMMIT_AT_LEAST_LOCAL = `SELECT set_config('synchronous_commit', 'on', false) WHERE current_setting('synchronous_commit') = 'off'`;

/**
 * Opens a pooled Kysely handle. The caller owns it and must `destroy()` it.
 * Its sessions commit synchronously whatever the server's default (see
 * {@link SYNCHRONOUS_COMMIT_AT_LEAST_LOCAL}): a write acknowledged after the
 * barrier is on disk.
 *
 * Every client gets an 'error' listener for its whole life: pg-pool listens
 * only while a client is idle, and an 'error' event with no listener (a
 * checked-out client whose server restarted: `ECONNRESET`, `terminating
 * connection due to unexpected postmaster exit`) would end the process. The
 * query in flight fails with the same error, and the released client, no
 * longer queryable, is dropped from the pool.
 */
export function createDatabase(opts: DatabaseOptions): Kysely<DB> {
  // A URL naming several hosts or a target_session_attrs connects through its host list (libpq's rules).
  const multiHost = usesHostList(opts.connectionString);
  const pool = new pg.Pool({
    ...(multiHost ? { Client: HostListClient as unknown as typeof pg.Client, hostListUrl: opts.connectionString } : {}),
    connectionString: multiHost ? hostListConnector(opts.connectionString).list.urlFor(0) : opts.connectionString,
    max: opts.maxConnections ?? 20,
    connectionTimeoutMillis: opts.connectionTimeoutMs ?? 5000,
    keepAlive: true,
    // Awaited before the client is handed out; when it fails the pool ends the client and the
    // caller gets the error (Kysely's onCreateConnection would keep the client checked out).
    onConnect: async (client) => {
      await client.query(SYNCHRONOUS_COMMIT_AT_LEAST_LOCAL);
      await opts.onConnect?.(client);
    },
  });
  const report = (err: Error) => opts.onPoolError?.(err);
  pool.on('error', report);
  const deadline = opts.statementDeadline ?? DEFAULT_STATEMENT_DEADLINE;
  pool.on('connect', (client) => {
    client.on('error', report);
    sendMarkedQueriesNamed(client);
    // After it: that wrapper calls the class's query, so it must be the inner one.
    installStatementDeadline(client, deadline);
  });
  return platformHandle(pool, opts.rowSecurity ?? true);
}

/**
 * Changes how many connections `db`'s pool may open (pg-pool reads its
 * `max` on every checkout, so this takes effect at once; connections above
 * the new bound close as they are released and idle out). No-op for a
 * handle not made by {@link createDatabase}.
 */
export function setPoolSize(db: Kysely<DB>, max: number): void {
  const pool = poolOf(db);
  if (pool) (pool.options as { max: number }).max = max;
}

/**
 * Ends every connection of `db`'s pool at once (their statements in flight
 * fail, and the pool drops them): used when its server stopped answering
 * or is no longer the one to use (a failover), so that no request waits on
 * a session to a frozen or demoted server. New connections search the
 * URL's hosts again. No-op for a handle not made by {@link createDatabase}.
 */
export function dropConnections(db: Kysely<DB>): number {
  const pool = poolOf(db) as (pg.Pool & { _clients?: pg.Client[] }) | undefined;
  const clients = pool?._clients ?? [];
  for (const client of clients) {
    // Destroyed without an error (no 'error' event to catch): the socket closes, and the statement in flight fails with
    // "Connection terminated unexpectedly" (a 503), which a half-closed socket to a frozen server would never do.
    (client as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream?.destroy();
  }
  return clients.length;
}
