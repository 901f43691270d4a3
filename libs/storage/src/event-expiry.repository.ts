import { sql } from 'kysely';
import type { ObjectKey } from './object-key.js';
import { type DatabaseSource, routerOf, type ShardRouter } from './shard-router.js';

/** The storage resource both Event APIs (core/v1 and events.k8s.io/v1) keep their rows under. */
export const EVENTS_RESOURCE = 'events';

/** An Event whose last write is older than the TTL: its key and the revision it had when found. */
export interface ExpiredEvent {
  key: ObjectKey;
  revision: number;
}

/**
 * Finds Events (every tenant, every shard) last written more than a TTL
 * ago. A row has no write time, only a revision; each shard keeps marks of
 * when its revision counter stood where (table `revision_marks`, migration
 * 0024), recorded here at most once per `markIntervalMs`. An Event is
 * expired once its revision is at most that of the newest mark at least
 * `ttlMs` old, so it goes between `ttlMs` and `ttlMs + markIntervalMs`
 * after its last write. The deletions themselves go through
 * ObjectStoreRepository.delete (the write path that keeps tenant usage,
 * quota, the change log and watches exact).
 */
export class EventExpiryRepository {
  private readonly router: ShardRouter;

  constructor(source: DatabaseSource) {
    this.router = routerOf(source);
  }

  /**
   * Records a mark on every shard when its newest is older than
   * `markIntervalMs`, forgets marks older than the one in use, and returns
   * up to `limit` expired Events of tenants living on the shard read (the
   * default shard first). A shard that cannot be read is skipped; throws
   * only when every shard failed.
   */
  async expired(ttlMs: number, markIntervalMs: number, limit: number): Promise<ExpiredEvent[]> {
    const out: ExpiredEvent[] = [];
    const shards = this.router.shards();
    let failures = 0;
    let failed: unknown;
    for (const s of shards) {
      if (out.length >= limit) break;
      try {
        const { rows: cut } = await sql<{ revision: string | null }>`
          WITH mark AS (
            INSERT INTO revision_marks (at, revision)
            SELECT now(), value FROM revision_counter
            WHERE NOT EXISTS (SELECT 1 FROM revision_marks WHERE at > now() - ${markIntervalMs} * interval '1 millisecond')
            ON CONFLICT (at) DO NOTHING
          ), cut AS (
            SELECT at, revision FROM revision_marks WHERE at <= now() - ${ttlMs} * interval '1 millisecond' ORDER BY at DESC LIMIT 1
          ), pruned AS (
            DELETE FROM revision_marks m USING cut WHERE m.at < cut.at
          )
          SELECT (SELECT revision FROM cut) AS revision
        `.execute(s.db);
        const cutoff = cut[0]?.revision;
        if (cutoff === null || cutoff === undefined) continue;
        const { rows } = await sql<{ tenant: string; namespace: string; name: string; revision: string }>`
          SELECT e.tenant, e.namespace, e.name, e.revision
          FROM tenants t
          CROSS JOIN LATERAL (
            SELECT o.tenant, o.namespace, o.name, o.revision FROM objects o
            WHERE o.tenant = t.name AND o.resource = ${EVENTS_RESOURCE} AND o.revision <= ${cutoff}::bigint
            LIMIT ${limit - out.length}
          ) e
          LIMIT ${limit - out.length}
        `.execute(s.db);
        for (const r of rows) {
          if (!this.router.owns(s.name, r.tenant)) continue;
          out.push({ key: { tenant: r.tenant, resource: EVENTS_RESOURCE, namespace: r.namespace, name: r.name }, revision: Number(r.revision) });
        }
      } catch (err) {
        failed = err;
        failures++;
      }
    }
    if (failures > 0 && failures === shards.length) throw failed;
    return out;
  }
}
