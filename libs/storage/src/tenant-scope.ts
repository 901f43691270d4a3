import { Kysely, PostgresDialect } from 'kysely';
import { LRUCache } from 'lru-cache';
import type pg from 'pg';
import { PREPARE_MARK } from './prepared-statements.js';
import type { DB } from './db.js';

/**
 * Row-level security between tenants (migration 0019).
 *
 * Every table holding tenant data has a policy that shows the role
 * `plinth_request` only the rows of the tenant named by the session setting
 * `plinth.tenant`. A handle from {@link tenantScoped} runs each statement
 * as that role with that tenant set, so a statement on the request path
 * that forgets or gets wrong its `WHERE tenant = …` still sees, changes and
 * inserts no other tenant's rows: PostgreSQL refuses them.
 *
 * The platform's own handle (what {@link createDatabase} returns: sweeps,
 * the relay, compaction, moves, controllers working across tenants) runs as
 * the connecting role, the tables' owner, which policies do not bind.
 *
 * Both kinds of handle share one pool. The settings are session-level (the
 * durable write procedures COMMIT inside, which would end transaction-level
 * ones), so each checkout makes the connection what its handle needs: a
 * tenant handle sets role and tenant unless the connection already has
 * that tenant, the platform handle resets the role unless it was never set.
 * That costs one round trip on a checkout that changes what the connection
 * was, none otherwise.
 */

/** The role the request path's statements run as (created by migration 0019). */
export const REQUEST_ROLE = 'plinth_request';

/** What a pooled connection runs as now: a tenant's name, or PLATFORM. */
const PLATFORM = '';
const connectionScope = new WeakMap<pg.PoolClient, string>();

/** The pool behind each handle made by createDatabase, and whether its tenant handles are scoped. */
interface ScopedPool {
  pool: pg.Pool;
  rowSecurity: boolean;
  tenants: LRUCache<string, Kysely<DB>>;
}
const scopedPools = new WeakMap<Kysely<DB>, ScopedPool>();

/** How many tenant handles one pool keeps (a handle is a few small objects; one per active tenant). */
const TENANT_HANDLES = 4096;

/**
 * The platform's handle on `pool`: its checkouts run as the connecting
 * role. `rowSecurity: false` makes {@link tenantScoped} hand this handle
 * out for every tenant (PLINTH_ROW_LEVEL_SECURITY=off).
 */
export function platformHandle(pool: pg.Pool, rowSecurity: boolean): Kysely<DB> {
  const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool: checkoutsAs(pool, PLATFORM, true) }) });
  scopedPools.set(db, { pool, rowSecurity, tenants: new LRUCache({ max: TENANT_HANDLES }) });
  return db;
}

/**
 * A handle on the same pool as `db` whose statements run as the request
 * role for `tenant` only (see the module comment). `db` itself when it was
 * not made by createDatabase (a caller's transaction is already scoped by
 * the handle that began it) or when row-level security is off. Pure; cached.
 */
export function tenantScoped(db: Kysely<DB>, tenant: string): Kysely<DB> {
  const scoped = scopedPools.get(db);
  if (!scoped?.rowSecurity) return db;
  let handle = scoped.tenants.get(tenant);
  if (!handle) {
    handle = new Kysely<DB>({ dialect: new PostgresDialect({ pool: checkoutsAs(scoped.pool, tenant, false) }) });
    scoped.tenants.set(tenant, handle);
  }
  return handle;
}

/** Whether tenant handles of `db` run under row-level security (false for a handle not made by createDatabase). */
export function rowSecurityOf(db: Kysely<DB>): boolean {
  return scopedPools.get(db)?.rowSecurity ?? false;
}

/** The pg pool behind a handle made by createDatabase, or undefined. */
export function poolOf(db: Kysely<DB>): pg.Pool | undefined {
  return scopedPools.get(db)?.pool;
}

/**
 * What Kysely's Postgres driver needs of a pool (connect, end), over the
 * shared `pool`, with each checkout made to run as `scope`. Only the
 * platform handle (`ownsPool`) ends the real pool when destroyed; a tenant
 * handle's `end` does nothing.
 */
function checkoutsAs(pool: pg.Pool, scope: string, ownsPool: boolean): { connect(): Promise<pg.PoolClient>; end(): Promise<void> } {
  return {
    connect: async () => {
      const client = await pool.connect();
      if ((connectionScope.get(client) ?? PLATFORM) === scope) return client;
      try {
        if (scope === PLATFORM) await client.query('RESET ROLE; RESET plinth.tenant');
        else await client.query(`${PREPARE_MARK}SELECT set_config('role', '${REQUEST_ROLE}', false), set_config('plinth.tenant', $1, false)`, [scope]);
      } catch (err) {
        // What the connection runs as is unknown now: it must not serve anyone else.
        connectionScope.delete(client);
        client.release(err instanceof Error ? err : new Error(String(err)));
        throw err;
      }
      connectionScope.set(client, scope);
      return client;
    },
    end: async () => {
      if (ownsPool) await pool.end();
    },
  };
}
