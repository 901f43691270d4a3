import type { Logger } from 'pino';
import { Counter, type Registry } from 'prom-client';
import { type Database, DEFAULT_SHARD, type TenantMoveRepository } from '@plinth/storage';
import { isPlainObject } from '@plinth/apimachinery';
import { PLATFORM_TENANT, type TenantObject } from '../kinds/tenant/tenant-api.js';
import type { ShardPool } from './shard-pool.js';

/** What the sweep is built from. */
export interface TenantLeftoverSweepDeps {
  pool: Pick<ShardPool, 'shards'>;
  moves: Pick<TenantMoveRepository, 'rowsOn' | 'discard' | 'fence'>;
  /** Every Tenant object now. */
  listTenants: () => Promise<TenantObject[]>;
  registry: Registry;
  logger: Logger;
}

/** What the sweep does with a tenant's row on a shard. */
export type LeftoverAction = 'remove' | 'unfence';

/** A tenant's row on a shard, as the sweep judges it. */
export interface ShardRow {
  name: string;
  objectUid: string | null;
  phase: string;
  fenced: boolean;
}

function placement(t: TenantObject): { lives: string; wants: string | undefined } {
  const lives = typeof t.status?.shard === 'string' && t.status.shard ? t.status.shard : DEFAULT_SHARD;
  const wants = isPlainObject(t.spec) && typeof t.spec.shard === 'string' && t.spec.shard ? t.spec.shard : undefined;
  return { lives, wants };
}

/** True when the Tenant asks to live on another shard than it does: a move is pending or running. Pure. */
export function moveAsked(t: TenantObject): boolean {
  const { lives, wants } = placement(t);
  return wants !== undefined && wants !== lives;
}

/**
 * What to do with `row` on `shard` given the Tenant of its name (undefined:
 * none). Pure. Removed: rows of a tenant that has no Tenant object (except
 * a row from before migration 0021, which start-up gives a Tenant, and a
 * Terminating row on the default shard, which the tenant controller
 * finishes), rows made for another Tenant object of the same name (an
 * earlier tenant's), and rows of a tenant on a shard it neither lives on
 * nor is moving to (a failed departure, a rollback's partial copy, a
 * deletion that missed a shard). Unfenced: the row where the tenant lives
 * when no move is asked for (a rollback that stopped before unfencing).
 */
export function judgeLeftover(shard: string, row: ShardRow, t: TenantObject | undefined): LeftoverAction | undefined {
  if (row.name === PLATFORM_TENANT) return undefined;
  if (!t) {
    if (row.objectUid === null) return undefined;
    if (shard === DEFAULT_SHARD && row.phase === 'Terminating') return undefined;
    return 'remove';
  }
  if (row.objectUid !== null && row.objectUid !== t.metadata.uid) return 'remove';
  const { lives, wants } = placement(t);
  if (shard !== lives) return wants === shard ? undefined : 'remove';
  if (row.fenced && (!wants || wants === lives)) return 'unfence';
  return undefined;
}

/**
 * Finds and removes rows of tenants on shards they do not live on, run
 * periodically by the tenant mover's leader: every shard's tenant rows are
 * read first, then every Tenant object, and each row judged by
 * {@link judgeLeftover}. A row is acted on only when two sweeps in a row
 * judged it the same at the same generation (so a row a move's departure
 * grace keeps, or one read mid-change, is left for a moment), and each
 * action is fenced by the generation read (migration 0021): a move that
 * took the row over since makes it fail and change nothing. Logs each
 * action; `plinth_tenant_leftovers_total` counts them.
 */
export class TenantLeftoverSweep {
  private previous = new Set<string>();
  private readonly acted: Counter<'action'>;

  constructor(private readonly deps: TenantLeftoverSweepDeps) {
    this.acted = new Counter({
      name: 'plinth_tenant_leftovers_total',
      help: 'Rows of tenants on shards they do not live on, found and acted on by the leftover sweep, by action (remove, unfence) and outcome.',
      labelNames: ['action'] as const,
      registers: [deps.registry],
    });
  }

  /** One sweep over every connected shard; returns what it did. Never throws (logs). */
  async run(): Promise<{ removed: number; unfenced: number }> {
    const done = { removed: 0, unfenced: 0 };
    try {
      const read: Array<{ shard: string; db: Database; rows: Array<ShardRow & { epoch: number }> }> = [];
      for (const h of this.deps.pool.shards()) {
        try {
          read.push({ shard: h.name, db: h.db, rows: await this.deps.moves.rowsOn(h.db) });
        } catch (err) {
          this.deps.logger.warn({ shard: h.name, err: (err as Error).message }, 'leftover sweep: could not read the shard');
        }
      }
      // Read after the rows: a move claims its Tenant before it takes any row over.
      const tenants = new Map((await this.deps.listTenants()).map((t) => [t.metadata.name!, t]));
      const seen = new Set<string>();
      for (const { shard, db, rows } of read) {
        for (const row of rows) {
          const action = judgeLeftover(shard, row, tenants.get(row.name));
          if (!action) continue;
          const key = `${shard}\u0000${row.name}\u0000${row.epoch}\u0000${action}`;
          seen.add(key);
          if (!this.previous.has(key)) continue;
          try {
            if (action === 'remove') await this.deps.moves.discard(db, row.name, row.epoch);
            else await this.deps.moves.fence(db, row.name, row.epoch, false);
            done[action === 'remove' ? 'removed' : 'unfenced']++;
            this.acted.inc({ action });
            this.deps.logger.warn({ shard, tenant: row.name, action, objectUid: row.objectUid }, 'leftover sweep: rows of a tenant that does not live on this shard');
          } catch (err) {
            this.deps.logger.warn({ shard, tenant: row.name, action, err: (err as Error).message }, 'leftover sweep: action failed (taken over meanwhile?); retried next sweep');
          }
        }
      }
      this.previous = seen;
    } catch (err) {
      this.deps.logger.warn({ err: (err as Error).message }, 'leftover sweep failed');
    }
    return done;
  }
}

/**
 * Removes every row of `tenant` from every connected shard that still
 * holds some (for a tenant being deleted: no other tenant of its name can
 * exist meanwhile), or with `exceptObjectUid`, only rows made for another
 * Tenant object than that one (an earlier tenant's, which a new tenant of
 * the name never adopts). Each shard's row is first taken over for a newer
 * generation, so that a mover still copying there fails. Returns on how
 * many shards it removed rows. A shard not connected now is left to the
 * leftover sweep.
 */
export async function purgeEverywhere(
  pool: Pick<ShardPool, 'shards'>,
  moves: Pick<TenantMoveRepository, 'takeOver' | 'discard'>,
  tenant: string,
  exceptObjectUid?: string,
): Promise<number> {
  let found = 0;
  for (const h of pool.shards()) {
    const epoch = await moves.takeOver(h.db, tenant, exceptObjectUid);
    if (epoch === undefined) continue;
    found++;
    await moves.discard(h.db, tenant, epoch);
  }
  return found;
}
