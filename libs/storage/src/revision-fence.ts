import { type Kysely, sql } from 'kysely';
import type { Redis } from 'ioredis';
import type { DB } from './db.js';
import { waitForReplica } from './watch/redis-connection.js';

/**
 * Where the revision ceiling of each database is recorded, outside the
 * database (a failover of the database must not lose it). Values only grow.
 */
export interface RevisionLeaseStore {
  /** The recorded ceiling of `key` (0 when none). */
  read(key: string): Promise<number>;
  /** Raises the recorded ceiling of `key` to at least `value`; resolves once recorded. */
  raise(key: string, value: number): Promise<void>;
  /** Closes its connection. */
  close?(): Promise<void>;
}

const RAISE_SCRIPT = `local v = tonumber(redis.call('GET', KEYS[1]) or '0')
local n = tonumber(ARGV[1])
if n > v then redis.call('SET', KEYS[1], ARGV[1]) end
return 1`;

/**
 * A {@link RevisionLeaseStore} in Redis: one key per database, raised with
 * a script (never lowered). With replicas, a raise resolves only once one
 * of them has it (`WAIT`; it rejects otherwise, and the database's ceiling
 * is then not extended), so a Sentinel failover, which promotes the most
 * up-to-date replica, keeps it; on a lone Redis, persistence
 * (`appendonly yes`, `appendfsync always`) is what keeps it across a
 * restart (docs/operations.md).
 */
export class RedisRevisionLeaseStore implements RevisionLeaseStore {
  constructor(private readonly redis: Redis) {}

  async read(key: string): Promise<number> {
    return Number((await this.redis.get(key)) ?? 0);
  }

  async raise(key: string, value: number): Promise<void> {
    await this.redis.eval(RAISE_SCRIPT, 1, key, String(value));
    await waitForReplica(this.redis, 1000);
  }

  async close(): Promise<void> {
    this.redis.disconnect();
  }
}


/** What {@link RevisionFence.check} found. */
export interface FenceState extends PrimaryDurability {
  timeline: number;
  systemIdentifier: string;
  /** The current timeline's epoch: the counter found when it was fenced, and what it was raised to. */
  counterFound: number;
  raisedTo: number;
  /** This call fenced the timeline (no replica had). */
  fenced: boolean;
  /** The counter now and its ceiling (null: none). */
  counter: number;
  ceiling: number | null;
}

/** What a primary promises about an acknowledged write if it is lost. */
export interface PrimaryDurability {
  /** Standbys a commit waits for now (`sync` or `quorum` in pg_stat_replication; 0 without the rights to see them: grant pg_monitor). */
  synchronousStandbys: number;
  /** Plinth's sessions' `synchronous_commit` (`off` is raised to `on` by every session, db.ts). */
  synchronousCommit: string;
  /** The primary's `synchronous_standby_names` ('' when commits wait for no standby). */
  synchronousStandbyNames?: string;
}

/**
 * Whether a write acknowledged by a primary in `d` survives the loss of
 * that primary: its commit waited for a standby, because
 * `synchronous_standby_names` names one (or `*`) and `synchronous_commit`
 * waits for it. Not the number of standbys streaming now: with none, such
 * a primary does not acknowledge at all (writes wait), which is what
 * Patroni's `synchronous_mode_strict` does (it sets `*`), while without
 * `strict` Patroni empties the setting whenever no standby is healthy and
 * on every promotion, and the primary then acknowledges alone.
 */
export function survivesPrimaryLoss(d: PrimaryDurability): boolean {
  const names = d.synchronousStandbyNames ?? (d.synchronousStandbys > 0 ? '*' : '');
  return names.trim() !== '' && ['on', 'remote_write', 'remote_apply'].includes(d.synchronousCommit);
}

/** Options of {@link RevisionFence}. */
export interface RevisionFenceOptions {
  db: Kysely<DB>;
  /** Where ceilings are recorded; without one there is no ceiling and the bound is `seen` alone (one replica only). */
  leaseStore?: RevisionLeaseStore;
  /** The key of this database in the lease store (its system identifier is appended). */
  leaseKey: string;
  /** How far ahead of the counter the ceiling is kept (revisions). */
  block: number;
  /** The highest revision of this database this replica has handed out or shown (acknowledged writes, watch events). */
  seen: () => number;
  /** Told when the store could not record a ceiling extension (the shard keeps serving up to the current ceiling). */
  onStoreError?: (err: Error) => void;
}

/**
 * Makes sure a primary never hands out a revision handed out before, on any
 * timeline (see migration 0022). Run before a replica serves a shard and
 * then once a second:
 *
 * - On a timeline no replica fenced yet (a promoted standby): the counter is
 *   raised above the bound B = max(the recorded ceiling, this replica's
 *   highest seen revision, the ceiling the new primary replicated), and the
 *   epoch row recorded with the gap. Every revision any replica could have
 *   handed out is ≤ B: the counter of any primary never passed its ceiling
 *   (the trigger), and a ceiling was recorded in the store before the
 *   database had it.
 * - Otherwise it keeps the ceiling at least block/2 ahead of the counter,
 *   recording the new ceiling in the store first.
 *
 * Revisions strictly between the counter found and the one raised to are
 * lost: reads of the change log from one of them are 410 Expired
 * (`plinth_history_gap`, migration 0022).
 */
export class RevisionFence {
  constructor(private readonly opts: RevisionFenceOptions) {}

  /** Checks (and fences, or extends the ceiling) once. Throws on a database or store error (the shard is then not ready). */
  async check(): Promise<FenceState> {
    const { db } = this.opts;
    const { rows } = await sql<{ timeline: number; sid: string; value: number; ceiling: number | null; found: number | null; raised: number | null; sync_standbys: number; sync_commit: string; sync_names: string }>`
      SELECT t.timeline, (SELECT system_identifier::text FROM pg_control_system()) AS sid, rc.value, rc.ceiling,
        e.counter_found AS found, e.raised_to AS raised,
        (SELECT count(*) FROM pg_stat_replication WHERE sync_state IN ('sync', 'quorum'))::int AS sync_standbys,
        current_setting('synchronous_commit') AS sync_commit, current_setting('synchronous_standby_names') AS sync_names
      FROM (SELECT plinth_timeline() AS timeline) t CROSS JOIN revision_counter rc
      LEFT JOIN revision_epochs e ON e.timeline = t.timeline
      WHERE rc.id = 1
    `.execute(db);
    const r = rows[0];
    const durability = { synchronousStandbys: r.sync_standbys, synchronousCommit: r.sync_commit === 'off' ? 'on' : r.sync_commit, synchronousStandbyNames: r.sync_names };
    const key = `${this.opts.leaseKey}:${r.sid}`;
    const store = this.opts.leaseStore;
    if (r.found === null || r.raised === null) return { ...(await this.fence(r.timeline, r.sid, r.ceiling, key)), ...durability };
    let ceiling = r.ceiling;
    if (store) {
      const extend = ceiling === null || ceiling - r.value < this.opts.block / 2;
      const next = extend ? r.value + this.opts.block : (ceiling ?? 0);
      try {
        // Also puts back a ceiling the store lost (a Redis failover to a replica without its last raise): the
        // database's ceiling must never be above the store's, or a database failover losing it could go below.
        // A store that cannot be read now is tried again at the next check (reported only when a raise is due).
        if (extend || (await store.read(key).catch(() => next)) < next) await store.raise(key, next);
      } catch (err) {
        // The store is down: writes go on up to the ceiling already set (then fail with 503 until it is back).
        this.opts.onStoreError?.(err as Error);
        return { timeline: r.timeline, systemIdentifier: r.sid, counterFound: r.found, raisedTo: r.raised, fenced: false, counter: r.value, ceiling, ...durability };
      }
      if (extend) {
        await sql`UPDATE revision_counter SET ceiling = greatest(coalesce(ceiling, 0), ${next}::bigint) WHERE id = 1`.execute(db);
        ceiling = Math.max(ceiling ?? 0, next);
      }
    }
    return { timeline: r.timeline, systemIdentifier: r.sid, counterFound: r.found, raisedTo: r.raised, fenced: false, counter: r.value, ceiling, ...durability };
  }

  private async fence(timeline: number, sid: string, replicatedCeiling: number | null, key: string): Promise<Omit<FenceState, keyof PrimaryDurability>> {
    const { db, leaseStore: store } = this.opts;
    const recorded = store ? await store.read(key) : 0;
    const bound = Math.max(recorded, this.opts.seen(), replicatedCeiling ?? 0);
    const ceiling = store ? bound + 1 + this.opts.block : null;
    if (store && ceiling !== null) await store.raise(key, ceiling);
    return db.transaction().execute(async (tx) => {
      const { rows } = await sql<{ value: number }>`SELECT value FROM revision_counter WHERE id = 1 FOR UPDATE`.execute(tx);
      const found = rows[0].value;
      const { rows: done } = await sql<{ found: number; raised: number }>`SELECT counter_found AS found, raised_to AS raised FROM revision_epochs WHERE timeline = ${timeline}`.execute(tx);
      if (done.length > 0) {
        return { timeline, systemIdentifier: sid, counterFound: done[0].found, raisedTo: done[0].raised, fenced: false, counter: found, ceiling: replicatedCeiling };
      }
      // Nothing handed out above the bound: the next revision is above both.
      const raised = Math.max(found, bound > found ? bound + 1 : found);
      await sql`INSERT INTO revision_epochs (timeline, system_identifier, counter_found, raised_to) VALUES (${timeline}, ${sid}, ${found}, ${raised})`.execute(tx);
      await sql`UPDATE revision_counter SET value = ${raised}::bigint, ceiling = ${ceiling}::bigint WHERE id = 1`.execute(tx);
      return { timeline, systemIdentifier: sid, counterFound: found, raisedTo: raised, fenced: true, counter: raised, ceiling };
    });
  }
}
