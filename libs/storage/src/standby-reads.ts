import { sql } from 'kysely';
import type pg from 'pg';
import { createDatabase, type Database, dropConnections } from './db.js';
import { type ObjectKey, type StoredObject, withResourceVersion } from './object-key.js';
import { ObjectListRepository } from './object-list.repository.js';
import { ChangeLogRepository } from './change-log.repository.js';
import { DEFAULT_SHARD, type ShardRouter } from './shard-router.js';
import { StorageError } from './storage-error.js';
import { tenantScoped } from './tenant-scope.js';
import { openBody, prepareBodies } from './value/stored-body.js';

/**
 * Reads from streaming standbys (read replicas), for the reads upstream
 * lets be stale: `resourceVersion=0` (any revision) and NotOlderThan a
 * revision the standby has replayed. See docs/storage.md, "Reads from
 * standbys", for why each check below is needed.
 *
 * What a standby proves, and how:
 *
 * - It holds the primary's history, not a lost one: every connection to it
 *   checks, when opened, that the server holds the `revision_epochs` row of
 *   the primary's current timeline (the fence writes it on the new primary
 *   before it serves a write, so a standby that still follows a dead
 *   primary, or an old primary cut off by a failover, lacks it); when the
 *   primary's timeline changes, every connection is dropped and checked
 *   again. A server that has replayed a row never loses it, so a checked
 *   connection stays good for that timeline.
 * - The primary's timeline is current: standby reads stop when the primary
 *   has not confirmed it for {@link CONFIRM_MS} (the primary is down,
 *   frozen or failing over: a fence can only declare revisions lost after a
 *   new primary is promoted, which takes longer).
 * - Its revision: the revision counter is read in the same statement as the
 *   rows (ObjectListRepository's newest-state read, {@link StandbyReads.get}),
 *   so the answer's resourceVersion is the standby's own snapshot; a read
 *   needing NotOlderThan r is only sent when the last probe saw ≥ r, and
 *   refused (the caller goes to the primary) when the answer is older.
 * - Freshness for "any": the standby is compared with the primary's counter
 *   as sampled by the probes: it counts as `lagMs` behind since the first
 *   sample that was ahead of it; above `maxLagMs` reads go to the primary.
 */

/** How long a primary's confirmation of its timeline (and a standby's probe) stays good for routing reads. */
export const CONFIRM_MS = 3000;
/** How long a standby that failed a read is left alone (reads go to the primary meanwhile). */
const BACKOFF_MS = 2000;
/** How long the primary's counter samples are kept (the longest lag measured). */
const SAMPLES_MS = 60_000;

/** What a read allows: any revision (`resourceVersion=0`), or none older than `notOlderThan`. */
export interface ReadNeed {
  notOlderThan?: number;
}

/** The primary of a shard as its probe found it (RevisionFence.check). */
export interface PrimaryState {
  systemIdentifier: string;
  timeline: number;
  /** Its revision counter. */
  counter: number;
}

/** Options of {@link StandbyReplica}. */
export interface StandbyReplicaOptions {
  url: string;
  rowSecurity: boolean;
  /** Connect and statement timeout on the standby (ms): a slow standby fails fast and the read goes to the primary. */
  timeoutMs: number;
  /** How far behind the primary (ms) a standby may be for `resourceVersion=0` reads. */
  maxLagMs: number;
  maxConnections?: number;
  onPoolError?: (err: Error) => void;
}

/** What a standby was found at by its last probe. */
export interface StandbyState {
  /** The newest revision it has replayed. */
  revision: number;
  /** How long it has been behind the primary (0: caught up at the last probe). */
  lagMs: number;
  /** When it was probed (ms since the epoch). */
  at: number;
}

/** Refusal of a read by a standby that cannot show what the read needs (the caller reads from the primary). */
export class StandbyBehind extends Error {}

/** One shard's read replica: its pool and what its probes found. */
export class StandbyReplica {
  readonly db: Database;
  private epoch: { sid: string; timeline: number } | undefined;
  private confirmedAt = 0;
  private samples: Array<{ at: number; revision: number }> = [];
  private found: StandbyState | undefined;
  private backoffUntil = 0;

  constructor(private readonly opts: StandbyReplicaOptions) {
    this.db = createDatabase({
      connectionString: opts.url,
      maxConnections: opts.maxConnections ?? 10,
      connectionTimeoutMs: opts.timeoutMs,
      rowSecurity: opts.rowSecurity,
      onPoolError: opts.onPoolError,
      onConnect: (client) => this.verify(client),
    });
  }

  /** A new connection: bounded statements, and the server must hold the primary's current timeline's epoch. */
  private async verify(client: pg.ClientBase): Promise<void> {
    const epoch = this.epoch;
    if (!epoch) throw new StorageError('Unavailable', 'the primary of this read replica is not known yet');
    const { rows } = await client.query<{ ok: boolean }>(
      `SELECT set_config('statement_timeout', $1, false) IS NOT NULL AND EXISTS (SELECT 1 FROM revision_epochs WHERE timeline = $2 AND system_identifier = $3) AS ok`,
      [String(this.opts.timeoutMs), epoch.timeline, epoch.sid],
    );
    if (!rows[0]?.ok) throw new StorageError('Unavailable', `the read replica lacks timeline ${epoch.timeline} of the primary's history`);
  }

  /**
   * The primary answered its probe (now). A new timeline drops every
   * standby connection: each is checked again when reopened.
   */
  primaryConfirmed(primary: PrimaryState, now = Date.now()): void {
    if (this.epoch?.sid !== primary.systemIdentifier || this.epoch.timeline !== primary.timeline) {
      this.epoch = { sid: primary.systemIdentifier, timeline: primary.timeline };
      this.found = undefined;
      this.samples = [];
      dropConnections(this.db);
    }
    this.confirmedAt = now;
    this.samples.push({ at: now, revision: primary.counter });
    while (this.samples.length > 0 && this.samples[0].at < now - SAMPLES_MS) this.samples.shift();
  }

  /** The primary did not answer: standby reads stop until it does again. */
  primaryLost(): void {
    this.confirmedAt = 0;
  }

  /** Reads the standby's revision (on a checked connection, within the timeout). Never throws. */
  async probe(now = Date.now()): Promise<StandbyState | undefined> {
    if (!this.epoch) return undefined;
    try {
      const { rows } = await sql<{ value: number }>`SELECT value FROM revision_counter WHERE id = 1`.execute(this.db);
      const revision = rows[0].value;
      const ahead = this.samples.find((s) => s.revision > revision);
      this.found = { revision, lagMs: ahead ? Math.max(0, now - ahead.at) : 0, at: now };
    } catch {
      this.found = undefined;
    }
    return this.found;
  }

  /** What the last probe found (undefined: down, unchecked, or not probed yet). */
  state(): StandbyState | undefined {
    return this.found;
  }

  /** Whether a read needing `need` may be sent to the standby now (see the module comment). */
  serves(need: ReadNeed, now = Date.now()): boolean {
    const found = this.found;
    if (!found || now < this.backoffUntil) return false;
    if (now - this.confirmedAt > CONFIRM_MS || now - found.at > CONFIRM_MS) return false;
    if (need.notOlderThan !== undefined) return found.revision >= need.notOlderThan;
    return found.lagMs <= this.opts.maxLagMs;
  }

  /** A read on the standby failed or was too old: reads go to the primary for a while. */
  failed(now = Date.now()): void {
    this.backoffUntil = now + BACKOFF_MS;
  }

  /** Closes the pool. */
  async close(): Promise<void> {
    await this.db.destroy();
  }
}

/**
 * The read replicas of every shard that has one, and the repositories that
 * read from them. `shardOf` says where a tenant lives (the tenant directory).
 */
export class StandbyReads {
  private readonly replicas = new Map<string, StandbyReplica>();
  /** Lists on the standby of the tenant's shard (newest state: the counter read with the rows). */
  readonly lists: ObjectListRepository;
  /** Reads the change log on the standby of the tenant's shard (watch catch-up: changesInScope only). */
  readonly changes: ChangeLogRepository;

  constructor(private readonly shardOf: (tenant: string) => string | Promise<string>) {
    const router: ShardRouter = {
      dbFor: (tenant) => {
        const placed = this.shardOf(tenant);
        return placed instanceof Promise ? placed.then((s) => this.dbOfShard(s)) : this.dbOfShard(placed);
      },
      shards: () => [],
      owns: () => false,
    };
    this.lists = new ObjectListRepository(router);
    this.changes = new ChangeLogRepository(router);
  }

  private dbOfShard(shard: string): Database {
    const r = this.replicas.get(shard);
    if (!r) throw new StorageError('Unavailable', `shard "${shard}" has no read replica`);
    return r.db;
  }

  /** Adds (or replaces) the read replica of `shard`. */
  async set(shard: string, replica: StandbyReplica): Promise<void> {
    const before = this.replicas.get(shard);
    this.replicas.set(shard, replica);
    if (before && before !== replica) await before.close();
  }

  /** Closes and forgets `shard`'s read replica. */
  async remove(shard: string): Promise<void> {
    const r = this.replicas.get(shard);
    this.replicas.delete(shard);
    await r?.close();
  }

  /** The read replica of `shard` (the platform's own database: DEFAULT_SHARD). */
  replica(shard: string = DEFAULT_SHARD): StandbyReplica | undefined {
    return this.replicas.get(shard);
  }

  /** Every shard's replica. */
  all(): Array<[string, StandbyReplica]> {
    return [...this.replicas.entries()];
  }

  /** The replica a read of `tenant` needing `need` may go to now, or undefined (read from the primary). */
  async choose(tenant: string, need: ReadNeed): Promise<StandbyReplica | undefined> {
    if (this.replicas.size === 0) return undefined;
    const r = this.replicas.get(await this.shardOf(tenant));
    return r?.serves(need) ? r : undefined;
  }

  /**
   * One object from `replica`, with the revision of the standby's snapshot
   * (read in the same statement). Throws {@link StandbyBehind} when that
   * revision is older than `need` allows, and whatever the standby's
   * connection throws.
   */
  async get(replica: StandbyReplica, key: ObjectKey, need: ReadNeed): Promise<{ object: StoredObject | undefined; revision: number }> {
    const db = tenantScoped(replica.db, key.tenant);
    const { rows } = await sql<{ at: number; revision: number | null; body: Record<string, unknown> | null }>`
      SELECT rc.value AS at, o.revision, o.body FROM revision_counter rc
      LEFT JOIN objects o ON o.tenant = ${key.tenant} AND o.resource = ${key.resource} AND o.namespace = ${key.namespace} AND o.name = ${key.name}
      WHERE rc.id = 1
    `.execute(db);
    const row = rows[0];
    if (need.notOlderThan !== undefined && row.at < need.notOlderThan) throw new StandbyBehind(`the read replica is at ${row.at}, before ${need.notOlderThan}`);
    if (!row.body || row.revision === null) return { object: undefined, revision: row.at };
    const keys = prepareBodies([{ key, body: row.body }]);
    if (keys) await keys;
    return { object: { key, revision: row.revision, body: withResourceVersion(openBody(key, row.body, { cached: true }), row.revision) }, revision: row.at };
  }

  /** Closes every replica's pool. */
  async close(): Promise<void> {
    for (const name of [...this.replicas.keys()]) await this.remove(name);
  }
}
