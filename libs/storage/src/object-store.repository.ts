import { Kysely, sql } from 'kysely';
import type { DB } from './db.js';
import { preparedSql } from './prepared-statements.js';
import { type ObjectKey, type StoredObject, withResourceVersion, withoutResourceVersion } from './object-key.js';
import { type DatabaseSource, routerOf, type ShardRouter, tenantDb } from './shard-router.js';
import { StorageError } from './storage-error.js';
import { type StorageTracer, traced } from './storage-tracer.js';
import type { GetOptions } from './storage.interface.js';
import { awaitKnownDurable, noteDurable, trackWrite } from './durable-revision.js';
import { tenantScoped } from './tenant-scope.js';
import { ENCRYPTED_FIELD, isStaleBody, openBody, openBodyOrSkip, prepareBodies, sealBody } from './value/stored-body.js';
import { withDataKeys } from './value/value-transformer.js';
import { type BatchedWrite, WriteBatcher, type WriteBatcherOptions, type WriteOutcome, writeInTransaction } from './write-batcher.js';

interface PgError {
  code?: string;
}

/** Turns the write functions' SQLSTATEs into StorageErrors; rethrows anything else. */
export function mapWriteError(err: unknown, key: ObjectKey): never {
  const code = (err as PgError)?.code;
  if (code === 'P0409') throw new StorageError('AlreadyExists', `${key.resource} "${key.name}" already exists`);
  if (code === 'P0404') throw new StorageError('NotFound', `${key.resource} "${key.name}" not found`);
  if (code === 'P0412') throw new StorageError('Conflict', `${key.resource} "${key.name}" has been modified`);
  if (code === 'P0403') throw new StorageError('TenantTerminating', tenantTerminatingMessage(key.tenant));
  if (code === 'P0423') throw new StorageError('Unavailable', `tenant ${key.tenant} is moving to another shard; retry the request`);
  if (code === 'P0429') throw limitError(key, String((err as { message?: string }).message ?? ''));
  if (code === 'P0430') throw quotaError(String((err as { message?: string }).message ?? ''));
  throw err;
}

/** The StorageError of a create refused by plinth_account_quota (message `quota|hard name|limit|used|requested`). */
function quotaError(message: string): StorageError {
  const [quota, hardName, limit, used, requested] = message.split('|');
  return new StorageError('QuotaExceeded', `exceeded quota: ${quota}`, undefined, undefined, undefined, { quota, hardName, limit: Number(limit), used: Number(used), requested: Number(requested) });
}

/** The StorageError of a write refused by plinth_account (message `key|measure|limit|used|requested`). */
function limitError(key: ObjectKey, message: string): StorageError {
  const [usageKey, measure, limit, used, requested] = message.split('|');
  const detail = { tenant: key.tenant, usageKey, measure: measure === 'bytes' ? 'bytes' : 'objects', limit: Number(limit), used: Number(used), requested: Number(requested) } as const;
  return new StorageError('LimitExceeded', `tenant ${key.tenant} exceeded a limit`, undefined, undefined, detail);
}

/** The refusal of a write to a tenant that is being deleted, as upstream words it for a terminating namespace. */
export function tenantTerminatingMessage(tenant: string): string {
  return `unable to create new content in tenant ${tenant} because it is being terminated`;
}

/** How long a write waits for its tenant's move to switch before it is answered 503 (the fence of a move lasts far less). */
export const MOVE_WAIT_MS = 10_000;

/**
 * A SQL expression that is true when every WAL record inserted so far is
 * flushed, so that any commit the same statement could see is durable. On
 * a standby (a read replica, standby-reads.ts) always true: it replays
 * only WAL its primary flushed, and the WAL functions fail in recovery.
 */
export const DURABLE = sql<boolean>`CASE WHEN pg_is_in_recovery() THEN true ELSE pg_current_wal_insert_lsn() <= pg_current_wal_flush_lsn() END`;

/**
 * The durability barrier: returns once every commit made before the call is
 * flushed to disk (one synchronous commit; concurrent calls share an fsync).
 * Writes commit asynchronously to let commits group, so a write is only
 * acknowledged, and a read only answered from possibly-unflushed state, after
 * this. Must run outside a transaction.
 */
export async function flushWal(db: Kysely<DB>): Promise<void> {
  await preparedSql`SELECT plinth_flush()`.execute(db);
}

/** How long a read waits for this process's writes in flight to be acknowledged before it runs the barrier itself. */
const OWN_WRITES_WAIT_MS = 20;

/**
 * Returns once every revision up to `revision` on `shard` is durable, for a
 * read that saw commits the global check could not vouch for: at once when
 * known (durable-revision.ts), once this process's writes in flight there
 * are acknowledged if that makes it known, otherwise after the barrier on
 * `db` (the shard's handle or a tenant's on it), which makes `revision`
 * known durable from then on.
 */
export async function ensureDurableUpTo(shard: Kysely<DB>, db: Kysely<DB>, revision: number): Promise<void> {
  if (await awaitKnownDurable(shard, revision, OWN_WRITES_WAIT_MS)) return;
  await flushWal(db);
  noteDurable(shard, revision);
}

/**
 * Reads and writes current objects. Every write is one call of a function
 * from the migrations that also appends to the change log and NOTIFYs, so it
 * commits atomically with its revision. Autocommit writes (the default `db`)
 * go through a {@link WriteBatcher}: concurrent writes share one
 * transaction, commit and WAL flush, each behind its own savepoint, and
 * resolve only once durable. Writes may instead be passed a transaction as
 * `db` (tests roll some back on purpose); they then run alone in it, and the
 * caller owns durability.
 */
export class ObjectStoreRepository {
  private readonly router: ShardRouter;
  /** One batcher per shard: a batch is one transaction, and no transaction spans two shards. */
  private readonly batchers = new Map<Kysely<DB>, WriteBatcher>();

  /** `tracer`: one span per get, create, update and delete (see StorageTracer); unset, none. */
  constructor(
    source: DatabaseSource,
    private readonly batching: WriteBatcherOptions = {},
    private readonly tracer?: StorageTracer,
  ) {
    this.router = routerOf(source);
  }

  /**
   * Returns the object, or undefined when it does not exist. Never answers
   * from a commit that is not yet durable unless `internal` is set: internal
   * reads (admission lookups, the read of a read-modify-write) are not shown
   * to clients as such, and the write that follows them has its own barrier.
   * `tx`: a caller's transaction on the tenant's shard (it owns durability);
   * or, as Storage.get takes them, the read's options.
   * Throws StorageError Internal when the stored body cannot be decrypted.
   */
  get(key: ObjectKey, txOrOptions?: Kysely<DB> | GetOptions, internal = false): Promise<StoredObject | undefined> {
    return traced(this.tracer, 'get', key, () => this.read(key, txOrOptions, internal));
  }

  private async read(key: ObjectKey, txOrOptions: Kysely<DB> | GetOptions | undefined, internal: boolean): Promise<StoredObject | undefined> {
    const tx = txOrOptions instanceof Kysely ? txOrOptions : undefined;
    if (txOrOptions && !tx) internal = (txOrOptions as GetOptions).internal ?? false;
    const shard = tx ?? (await this.router.dbFor(key.tenant));
    const db = tx ?? tenantScoped(shard, key.tenant);
    const { rows } = await preparedSql<{ revision: number | null; body: Record<string, unknown> | null; durable: boolean }>`
      SELECT o.revision, o.body, ${DURABLE} AS durable
      FROM (SELECT 1) AS one
      LEFT JOIN objects o ON o.tenant = ${key.tenant} AND o.resource = ${key.resource}
        AND o.namespace = ${key.namespace} AND o.name = ${key.name}
    `.execute(db);
    const row = rows[0];
    if (!row.durable && !internal && !tx) {
      // No row: its absence may be an unflushed delete's doing, which no revision of ours vouches for.
      if (row.revision === null) await flushWal(db);
      else await ensureDurableUpTo(shard, db, row.revision);
    }
    if (!row.body || row.revision === null) return undefined;
    const keys = prepareBodies([{ key, body: row.body }]);
    if (keys) await keys;
    const stored = row.body;
    return {
      key,
      revision: row.revision,
      body: withResourceVersion(openBody(key, stored, { cached: true }), row.revision),
      // Asked only by the read of a read-modify-write; a KMS v2 value's key_id costs a decode to learn.
      get stale() {
        return isStaleBody(key, stored);
      },
    };
  }

  /** Inserts a new object (encrypted when its resource is configured so). Throws StorageError AlreadyExists. Does not mutate `body`. */
  create(key: ObjectKey, body: Record<string, unknown>, tx?: Kysely<DB>): Promise<StoredObject> {
    return traced(this.tracer, 'create', key, async (span) => {
      const stored = withoutResourceVersion(body);
      const { r } = await this.write({ op: 'c', key, body: await withDataKeys(() => sealBody(key, stored)) }, tx);
      span?.setAttribute('revision', r);
      return { key, revision: r, body: withResourceVersion(stored, r) };
    });
  }

  /**
   * Replaces the object if its revision is still `expectedRevision` (null:
   * whatever it is). Throws StorageError NotFound or Conflict.
   */
  update(key: ObjectKey, body: Record<string, unknown>, expectedRevision: number | null, tx?: Kysely<DB>): Promise<StoredObject> {
    return traced(this.tracer, 'update', key, async (span) => {
      const stored = withoutResourceVersion(body);
      const { r } = await this.write({ op: 'u', key, body: await withDataKeys(() => sealBody(key, stored)), expected: expectedRevision }, tx);
      span?.setAttribute('revision', r);
      return { key, revision: r, body: withResourceVersion(stored, r) };
    });
  }

  /**
   * Removes the object if its revision is still `expectedRevision` (null:
   * whatever it is). Returns its last state stamped with the deletion's
   * revision (only its readable metadata when it cannot be decrypted: the
   * delete itself needs no key). Throws StorageError NotFound or Conflict.
   */
  delete(key: ObjectKey, expectedRevision: number | null, tx?: Kysely<DB>): Promise<StoredObject> {
    return traced(this.tracer, 'delete', key, async (span) => {
      const { r, b } = await this.write({ op: 'd', key, expected: expectedRevision }, tx);
      span?.setAttribute('revision', r);
      return { key, revision: r, body: withResourceVersion(b ? lastState(key, b) : {}, r) };
    });
  }

  /**
   * Runs one write: batched and durable on the tenant's shard, alone inside
   * a caller's transaction otherwise. A batched write refused because its
   * tenant is moving (fenced) or has moved (no row on the shard this
   * replica still routes to) waits for the move's switch and is retried on
   * the tenant's new shard, for at most MOVE_WAIT_MS: a refused write was
   * not committed, so retrying it never applies it twice.
   */
  private async write(w: BatchedWrite, tx: Kysely<DB> | undefined): Promise<WriteOutcome> {
    if (tx) {
      try {
        return await writeInTransaction(w, tx);
      } catch (err) {
        mapWriteError(err, w.key);
      }
    }
    let db = await this.router.dbFor(w.key.tenant);
    const deadline = Date.now() + MOVE_WAIT_MS;
    for (;;) {
      try {
        return await trackWrite(db, () => this.batcherFor(db).submit(w));
      } catch (err) {
        const code = (err as PgError)?.code;
        const retry = (code === 'P0423' || code === 'P0403') && Date.now() < deadline ? await this.router.relocated?.(w.key.tenant, db, code === 'P0423') : undefined;
        if (!retry) mapWriteError(err, w.key);
        db = retry;
      }
    }
  }

  private batcherFor(db: Kysely<DB>): WriteBatcher {
    let b = this.batchers.get(db);
    if (!b) {
      b = new WriteBatcher(db, this.batching);
      this.batchers.set(db, b);
    }
    return b;
  }

  /** Returns once every commit made so far on `tenant`'s shard (every shard when omitted) is durable (see {@link flushWal}). */
  async ensureDurable(tenant?: string): Promise<void> {
    if (tenant !== undefined) return flushWal(await tenantDb(this.router, tenant));
    for (const s of this.router.shards()) await flushWal(s.db);
  }

  /** The newest committed revision of `tenant`'s shard (the default shard when omitted). */
  async currentRevision(tenant?: string): Promise<number> {
    const db = tenant === undefined ? this.router.shards()[0].db : await tenantDb(this.router, tenant);
    const row = await db.selectFrom('revision_counter').select('value').executeTakeFirstOrThrow();
    return row.value;
  }

  /** Counts the objects of a resource in a namespace ('' counts cluster-wide for namespaced kinds is not meant). */
  async countInNamespace(tenant: string, namespace: string): Promise<number> {
    const row = await (await tenantDb(this.router, tenant))
      .selectFrom('objects')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('tenant', '=', tenant)
      .where('namespace', '=', namespace)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /**
   * Up to `limit` namespaces (any tenant) being deleted, on every shard: what
   * a namespace controller that was not running still has to empty. A shard
   * that cannot be read is skipped (its tenants wait for the next pass).
   */
  async terminatingNamespaces(limit = 100): Promise<Array<{ tenant: string; name: string }>> {
    return sweepShards(this.router, limit, async (db, n) => {
      const { rows } = await sql<{ tenant: string; name: string }>`
        SELECT tenant, name FROM objects WHERE resource = 'namespaces' AND body -> 'metadata' ? 'deletionTimestamp' LIMIT ${n}
      `.execute(db);
      return rows;
    });
  }

  /** The distinct resources that have objects in a namespace, for namespace deletion. */
  async resourcesInNamespace(tenant: string, namespace: string): Promise<string[]> {
    const rows = await (await tenantDb(this.router, tenant))
      .selectFrom('objects')
      .select('resource')
      .distinct()
      .where('tenant', '=', tenant)
      .where('namespace', '=', namespace)
      .execute();
    return rows.map((r) => r.resource);
  }
}

/** The last state of a deleted object: its body, or when that cannot be decrypted, the metadata it keeps readable. */
function lastState(key: ObjectKey, stored: Record<string, unknown>): Record<string, unknown> {
  const body = openBodyOrSkip(key, stored);
  if (body) return body;
  const { [ENCRYPTED_FIELD]: _sealed, ...readable } = stored;
  return readable;
}

/**
 * Runs `read` on each shard in turn until `limit` rows are gathered, and
 * returns those of tenants living on the shard read. A shard whose read fails is skipped: a sweep over every
 * tenant must not stop for one unreachable shard. Throws only when every
 * shard failed.
 */
export async function sweepShards<T extends { tenant: string } | { key: { tenant: string } }>(
  router: ShardRouter,
  limit: number,
  read: (db: Kysely<DB>, limit: number) => Promise<T[]>,
): Promise<T[]> {
  const out: T[] = [];
  const shards = router.shards();
  let failed: unknown;
  let failures = 0;
  for (const s of shards) {
    if (out.length >= limit) break;
    try {
      for (const row of await read(s.db, limit - out.length)) {
        if (router.owns(s.name, 'key' in row ? row.key.tenant : row.tenant)) out.push(row);
      }
    } catch (err) {
      failed = err;
      failures++;
    }
  }
  if (failures > 0 && failures === shards.length) throw failed;
  return out;
}
