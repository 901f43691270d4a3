import { Kysely } from 'kysely';
import type { DB } from './db.js';
import { tenantScoped } from './tenant-scope.js';

/** The name of the shard that is the platform's own database (it holds the Tenant and Shard objects). */
export const DEFAULT_SHARD = 'default';

/** One PostgreSQL database that tenants live on, with its pool. */
export interface ShardHandle {
  readonly name: string;
  readonly db: Kysely<DB>;
}

/**
 * Where the repositories find a tenant's database. Every statement on the
 * request path addresses one tenant, and so one shard: a repository asks
 * the router for that tenant's database and runs the statement there.
 * Sweeps that are not about one tenant (controllers, the relay, compaction)
 * ask for {@link ShardRouter.shards} and run on each.
 */
export interface ShardRouter {
  /**
   * The database of the shard `tenant` lives on. Rejects (or throws) with a
   * StorageError `Unavailable` when that shard is not connected, so only
   * its tenants are refused. Never opens a connection to another shard.
   */
  dbFor(tenant: string): Kysely<DB> | Promise<Kysely<DB>>;
  /** Every shard with a pool right now (the default shard first); for sweeps over all tenants. */
  shards(): readonly ShardHandle[];
  /**
   * True when `tenant` lives on `shard` now. A sweep keeps only such rows: a
   * tenant being copied to a shard, or whose copy a move left behind, has
   * rows there that are not its state.
   */
  owns(shard: string, tenant: string): boolean;
  /**
   * A write of `tenant` was refused on `refusedBy` because the tenant is
   * fenced there (`fenced`: a move is switching it) or has no row there
   * (it may have moved away). Resolves the database to try the write on
   * again, after waiting a little for the move to switch (at most about a
   * quarter of a second per call), or undefined when the refusal stands
   * (the tenant really is gone or terminating). Optional: without it,
   * refusals stand.
   */
  relocated?(tenant: string, refusedBy: Kysely<DB>, fenced: boolean): Promise<Kysely<DB> | undefined>;
}

/** A router over one database: every tenant lives on it (single-shard setups, tests). */
export function singleShard(db: Kysely<DB>): ShardRouter {
  const handles = [{ name: DEFAULT_SHARD, db }];
  return { dbFor: () => db, shards: () => handles, owns: () => true };
}

/** What a repository is built from: one database (every tenant on it), or a router over shards. */
export type DatabaseSource = Kysely<DB> | ShardRouter;

/** The router of `source`: itself, or a single-shard router over a plain database. Pure. */
export function routerOf(source: DatabaseSource): ShardRouter {
  return source instanceof Kysely ? singleShard(source) : source;
}

/**
 * The request path's handle on `tenant`'s data: its shard's database,
 * scoped so that row-level security shows and lets change only `tenant`'s
 * rows (see tenant-scope.ts). Every statement that addresses one tenant
 * runs on it; sweeps across tenants use {@link ShardRouter.shards}.
 * Synchronous when the router is.
 */
export function tenantDb(router: ShardRouter, tenant: string): Kysely<DB> | Promise<Kysely<DB>> {
  const db = router.dbFor(tenant);
  return db instanceof Promise ? db.then((d) => tenantScoped(d, tenant)) : tenantScoped(db, tenant);
}
