import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { type Database, isStaleMove, StaleMoveError, type Storage, type TenantMoveRepository } from '@plinth/storage';
import { ApiError, type KubeObject } from '@plinth/apimachinery';
import type { ControllerManager } from '../controllers/controller-manager.js';
import { InformerController, type KeySource, onInformer } from '../controllers/informer-controller.js';
import type { InformerEvent, SharedInformer } from '../controllers/shared-informer.js';
import { PLATFORM_TENANT, type TenantObject, TENANT_STORAGE_RESOURCE } from '../kinds/tenant/tenant-api.js';
import { tenantResource } from '../kinds/tenant/tenant.resource.js';
import type { ResourceStoreService } from '../resource-store/resource-store.service.js';
import { systemWriteContext } from '../resource-store/write-context.js';
import type { ShardPool } from './shard-pool.js';
import { TenantLeftoverSweep } from './tenant-leftover-sweep.js';
import { condition, generationOf, MoveInterrupted, MoveMetrics, shardsOf, withConditions } from './tenant-move-support.js';

/** Rows read and written per statement while copying. */
const BATCH = 2000;
/** Catch-up rounds before the fence, and the delta small enough to fence on. */
const MAX_ROUNDS = 20;
const SMALL_DELTA = 200;
/** How long the shard a tenant left keeps its rows after the switch, for replicas that have not seen it yet. */
export const DEPARTURE_GRACE_MS = 5000;
/** How often the mover's leader sweeps every shard for rows of tenants that do not live there. */
export const LEFTOVER_SWEEP_INTERVAL_MS = 30_000;

/** What the mover is built from. */
export interface TenantMoverDeps {
  pool: Pick<ShardPool, 'dbOfShard' | 'shards'>;
  moves: TenantMoveRepository;
  /** Read-after-write checks of a move's outcome (storage, not the informer, which may not have the write yet). */
  objects: Pick<Storage, 'get'>;
  store: Pick<ResourceStoreService, 'systemUpdate'>;
  /** The Tenant objects (the platform tenant's; the shared informer the mover reads from). */
  tenants: SharedInformer;
  /** Every Tenant object now, from storage (the leftover sweep's). */
  listTenants: () => Promise<TenantObject[]>;
  queues: Pick<ControllerManager, 'queue'>;
  registry: Registry;
  logger: Logger;
  /** How long the left shard keeps the tenant's rows after the switch (tests shorten it). */
  graceMs?: number;
  /** How often the leftover sweep runs (tests shorten it). */
  sweepIntervalMs?: number;
}

/**
 * Moves tenants between shards, live (one replica runs it): when a
 * Tenant's `spec.shard` differs from `status.shard`, copies its objects,
 * its kept change history and its other rows to the new shard while it is
 * served from the old one; then fences its writes on the old shard (they
 * wait), copies what changed meanwhile, raises the new shard's revision
 * counter past every revision the tenant was given, and switches the
 * directory (`status.shard`, `status.shardResourceVersion`). Writes then
 * go to the new shard; watches on the old one end and resume on the new
 * one from the copied history, without a gap. After a grace period the
 * old shard's rows are removed. A failure before the switch rolls back:
 * the old shard is unfenced, the partial copy discarded, `spec.shard`
 * set back, and the `Moving` condition says why. Progress is in the
 * `Moving` condition; `plinth_tenant_move_*` metrics count moves.
 *
 * Fencing: a move first claims a generation (`status.moveGeneration`,
 * the Tenant's resourceVersion it was claimed at, by compare-and-swap),
 * then takes the tenant's rows on both shards over for it (migration
 * 0021). Every later write of the move, on either shard or on the Tenant,
 * checks in the same transaction (or compare-and-swap) that its generation
 * still holds: a mover that lost its leadership without knowing (paused
 * past the lease) fails at its next step and changes nothing. A deletion
 * of the tenant ends its move (rolled back, or cancelled by the next
 * leader) before the tenant controller deletes it. Every
 * {@link LEFTOVER_SWEEP_INTERVAL_MS} the leader also sweeps every shard
 * for rows of tenants that do not live there ({@link TenantLeftoverSweep}).
 */
export class TenantMover extends InformerController {
  private readonly metrics: MoveMetrics;
  private readonly departures = new Set<Promise<void>>();
  /** Tenants whose running move must end, and why. */
  private readonly interrupted = new Map<string, MoveInterrupted>();
  private readonly moving = new Set<string>();
  private leading = false;
  private sweepTimer: NodeJS.Timeout | undefined;
  private sweeping: Promise<void> | undefined;
  /** The sweep of leftover rows (exposed for tests). */
  readonly sweep: TenantLeftoverSweep;

  constructor(private readonly deps: TenantMoverDeps) {
    super({ name: 'tenant-mover', workers: 2, queues: deps.queues });
    this.metrics = new MoveMetrics(deps.registry);
    this.sweep = new TenantLeftoverSweep({ pool: deps.pool, moves: deps.moves, listTenants: deps.listTenants, registry: deps.registry, logger: deps.logger });
  }

  /** Every Tenant that asks for another shard (all of them when it starts: a move the previous leader did not finish starts again). */
  protected sources(): KeySource[] {
    return [onInformer(this.deps.tenants, (e) => this.onTenant(e))];
  }

  /** Queues a Tenant that asks to move; a deletion of a Tenant that is moving ends its move. */
  private onTenant(e: InformerEvent): string | undefined {
    const t = e.object.body as TenantObject;
    const name = e.object.key.name;
    if (this.moving.has(name) && (e.type === 'delete' || t.metadata.deletionTimestamp)) this.interrupted.set(name, new MoveInterrupted(`tenant ${name} is being deleted`, false));
    if (e.type === 'delete') return undefined;
    const { from, to } = shardsOf(t);
    return to && to !== from && t.metadata.name ? t.metadata.name : undefined;
  }

  override start(): void {
    this.leading = true;
    this.interrupted.clear();
    super.start();
    this.sweepTimer = setInterval(() => {
      this.sweeping ??= this.sweep.run().then(() => undefined).finally(() => (this.sweeping = undefined));
    }, this.deps.sweepIntervalMs ?? LEFTOVER_SWEEP_INTERVAL_MS);
    this.sweepTimer.unref();
  }

  override async stop(): Promise<void> {
    this.leading = false;
    // Running moves end at their next step and are left to the next leader (which claims a newer generation).
    for (const name of this.moving) this.interrupted.set(name, new MoveInterrupted('this replica stopped leading the tenant mover', true));
    if (this.sweepTimer) clearInterval(this.sweepTimer);
    this.sweepTimer = undefined;
    await super.stop();
    await this.sweeping;
    await Promise.all(this.departures);
  }

  /** Moves `tenant` if its Tenant asks for another shard than it lives on; ends such a move when it is being deleted. Never throws for a failed move (it rolls back). */
  protected async reconcile(tenant: string): Promise<void> {
    const t = this.deps.tenants.get(PLATFORM_TENANT, '', tenant)?.body as TenantObject | undefined;
    if (!t) return;
    const { from, to } = shardsOf(t);
    if (!to || to === from) return;
    if (t.metadata.deletionTimestamp) return this.cancel(tenant, from, to);
    await this.move(tenant, from, to);
  }

  /** The Tenant as storage has it now. */
  private async tenant(name: string): Promise<TenantObject | undefined> {
    return (await this.deps.objects.get({ tenant: PLATFORM_TENANT, resource: TENANT_STORAGE_RESOURCE, namespace: '', name }, { internal: true }))?.body as TenantObject | undefined;
  }

  /** Throws when the running move of `tenant` must end (deletion, leadership lost). */
  private checkpoint(tenant: string): void {
    const why = this.interrupted.get(tenant) ?? (this.leading ? undefined : new MoveInterrupted('this replica stopped leading the tenant mover', true));
    if (why) throw why;
  }

  /**
   * Updates the Tenant by compare-and-swap, only while generation `gen`
   * holds its move and it still lives on `from` (else StaleMoveError,
   * nothing written); `live`: also only while it is not being deleted.
   */
  private async guarded(tenant: string, gen: number, from: string, live: boolean, mutate: (t: TenantObject) => void): Promise<void> {
    await this.deps.store.systemUpdate(systemWriteContext(PLATFORM_TENANT, tenantResource), tenant, (o: KubeObject) => {
      const t = o as TenantObject;
      if (generationOf(t) !== gen) throw new StaleMoveError(`tenant ${tenant}'s move is now of generation ${generationOf(t)}, not ${gen}`);
      if (shardsOf(t).from !== from) throw new StaleMoveError(`tenant ${tenant} no longer lives on shard ${from}`);
      if (live && t.metadata.deletionTimestamp) throw new MoveInterrupted(`tenant ${tenant} is being deleted`, false);
      mutate(t);
    });
  }

  /**
   * Claims a new generation for the move of `tenant` from `from` to `to`
   * (compare-and-swap on the Tenant: it must still live on `from` and ask
   * for `to`); `mutate` adds what the claim writes. Returns the generation.
   */
  private async claim(tenant: string, from: string, to: string, mutate: (t: TenantObject) => void): Promise<number> {
    let gen = 0;
    await this.deps.store.systemUpdate(systemWriteContext(PLATFORM_TENANT, tenantResource), tenant, (o: KubeObject) => {
      const t = o as TenantObject;
      const now = shardsOf(t);
      if (now.from !== from || now.to !== to) throw new StaleMoveError(`tenant ${tenant} no longer asks to move from ${from} to ${to}`);
      gen = Number(t.metadata.resourceVersion);
      if (!Number.isSafeInteger(gen) || gen <= (generationOf(t) ?? 0)) throw new Error(`tenant ${tenant}: cannot derive a move generation from resourceVersion ${t.metadata.resourceVersion}`);
      t.status = { ...t.status, moveGeneration: String(gen) } as TenantObject['status'];
      mutate(t);
    });
    return gen;
  }

  private async move(tenant: string, from: string, to: string): Promise<void> {
    const started = performance.now();
    const log = this.deps.logger.child({ tenant, from, to });
    let gen: number;
    try {
      gen = await this.claim(tenant, from, to, (t) => {
        if (t.metadata.deletionTimestamp) throw new StaleMoveError(`tenant ${tenant} is being deleted`);
        t.status = { ...t.status, conditions: withConditions(t, condition(t, 'Moving', 'True', 'Copying', `copying to shard ${to}`)) };
      });
    } catch (err) {
      if (isStaleMove(err)) return;
      throw err;
    }
    const l = log.child({ generation: gen });
    this.moving.add(tenant);
    this.interrupted.delete(tenant);
    let src: Database | undefined;
    let dst: Database | undefined;
    let fenced = false;
    try {
      src = this.deps.pool.dbOfShard(from, tenant);
      dst = this.deps.pool.dbOfShard(to, tenant);
      const departure = await this.deps.moves.claimSource(src, tenant, gen);
      if (!departure) throw new Error(`tenant ${tenant} has no rows on shard ${from}`);
      await this.deps.moves.prepareArrival(dst, tenant, departure, gen);
      const objects = await this.copyObjects(src, dst, tenant, gen, from, to);
      let last = await this.copyHistory(src, dst, tenant, gen, departure.historyFloor, departure.current);
      last = await this.catchUp(src, dst, tenant, gen, last);
      this.checkpoint(tenant);
      await this.guarded(tenant, gen, from, true, (t) => {
        t.status = { ...t.status, conditions: withConditions(t, condition(t, 'Moving', 'True', 'Switching', `${objects} objects copied; writes wait while the last changes are copied`)) };
      });
      const fenceStart = performance.now();
      const departedAt = await this.deps.moves.fence(src, tenant, gen, true);
      fenced = true;
      if (departedAt === undefined) throw new Error(`tenant ${tenant} left shard ${from} during the move`);
      while (true) {
        const r = await this.deps.moves.copyChanges(src, dst, tenant, gen, last, departedAt, BATCH, true);
        if (!r) break;
        last = r.last;
      }
      await this.deps.moves.copyRest(src, dst, tenant, gen);
      const since = await this.deps.moves.arrive(dst, tenant, gen, departedAt);
      this.checkpoint(tenant);
      await this.switchTo(tenant, gen, from, to, since, objects);
      this.metrics.fence.observe((performance.now() - fenceStart) / 1000);
      this.metrics.duration.observe((performance.now() - started) / 1000);
      this.metrics.moves.inc({ result: 'moved' });
      l.info({ objects, since, fencedMs: Math.round(performance.now() - fenceStart) }, 'tenant moved');
    } catch (err) {
      this.moving.delete(tenant);
      const message = err instanceof Error ? err.message : String(err);
      if (isStaleMove(err)) {
        // A newer mover (or a deletion) took the tenant over: this one's steps would all fail; it stops here.
        l.warn({ err: message }, 'tenant move superseded by a newer generation; this mover stops');
        this.metrics.moves.inc({ result: 'superseded' });
        return;
      }
      if (err instanceof MoveInterrupted && err.handOver) {
        l.warn({ err: message }, 'tenant move handed over to the next leader');
        if (fenced && src) await this.deps.moves.fence(src, tenant, gen, false).catch(() => undefined);
        this.metrics.moves.inc({ result: 'handed_over' });
        return;
      }
      l.warn({ err: message }, 'tenant move failed; rolling back');
      await this.rollBack(tenant, gen, from, to, message, fenced ? src : undefined, dst, l);
      return;
    } finally {
      this.interrupted.delete(tenant);
    }
    this.moving.delete(tenant);
    this.depart(tenant, gen, from, src);
  }

  /**
   * Rolls back the move of generation `gen`: first the Tenant (only while
   * `gen` holds it and the tenant still lives on `from`: that decides the
   * outcome), then the source unfenced and the partial copy discarded, each
   * step fenced by `gen`. When the switch turns out to have been made (an
   * answer lost after its commit), the move is complete instead.
   */
  private async rollBack(tenant: string, gen: number, from: string, to: string, why: string, fencedSrc: Database | undefined, dst: Database | undefined, log: Logger): Promise<void> {
    const deleting = /being deleted/.test(why);
    try {
      await this.guarded(tenant, gen, from, false, (t) => {
        t.spec = { ...(t.spec ?? {}), shard: from };
        const reason = deleting ? 'MoveCancelled' : 'MoveFailed';
        t.status = { ...t.status, conditions: withConditions(t, condition(t, 'Moving', 'False', reason, `the move to shard ${to} ${deleting ? 'was cancelled' : 'failed'} and was rolled back; the tenant stays on shard ${from}: ${why}`)) };
      });
    } catch (err) {
      if (err instanceof ApiError && err.code === 404) {
        // The Tenant is gone: nothing of it may stay on the destination.
      } else {
        const t = await this.tenant(tenant).catch(() => undefined);
        if (t && generationOf(t) === gen && shardsOf(t).from === to) {
          log.info('tenant move: the switch had been made; the move is complete');
          this.metrics.moves.inc({ result: 'moved' });
          this.depart(tenant, gen, from, fencedSrc ?? this.tryDb(from, tenant));
          return;
        }
        log.warn({ err: (err as Error).message }, 'tenant move: rollback superseded; a newer generation holds the tenant');
        this.metrics.moves.inc({ result: 'superseded' });
        return;
      }
    }
    if (fencedSrc) await this.deps.moves.fence(fencedSrc, tenant, gen, false).catch((e) => log.error({ err: (e as Error).message }, 'could not unfence the source'));
    if (dst) await this.deps.moves.discard(dst, tenant, gen).catch((e) => log.warn({ err: (e as Error).message }, 'could not discard the partial copy; the leftover sweep will'));
    this.metrics.moves.inc({ result: deleting ? 'cancelled' : 'rolled_back' });
  }

  private tryDb(shard: string, tenant: string): Database | undefined {
    try {
      return this.deps.pool.dbOfShard(shard, tenant);
    } catch {
      return undefined;
    }
  }

  /**
   * Ends the move of a Tenant being deleted that no mover is running (its
   * leader died or was paused): claims a newer generation, sets
   * `spec.shard` back, then removes the partial copy from the destination.
   */
  private async cancel(tenant: string, from: string, to: string): Promise<void> {
    let gen: number;
    try {
      gen = await this.claim(tenant, from, to, (t) => {
        t.spec = { ...(t.spec ?? {}), shard: from };
        t.status = { ...t.status, conditions: withConditions(t, condition(t, 'Moving', 'False', 'MoveCancelled', `the move to shard ${to} was cancelled: the tenant is being deleted`)) };
      });
    } catch (err) {
      if (isStaleMove(err)) return;
      throw err;
    }
    // The source taken over too (lifting a fence the stopped mover left): that mover's steps fail on both shards.
    const src = this.tryDb(from, tenant);
    if (src) await this.deps.moves.claimSource(src, tenant, gen).catch(() => undefined);
    const dst = this.tryDb(to, tenant);
    if (dst && (await this.deps.moves.claim(dst, tenant, gen).catch(() => false))) {
      await this.deps.moves.discard(dst, tenant, gen).catch((e) => this.deps.logger.warn({ tenant, err: (e as Error).message }, 'tenant move: could not discard a cancelled copy; the leftover sweep will'));
    }
    this.metrics.moves.inc({ result: 'cancelled' });
    this.deps.logger.info({ tenant, from, to, generation: gen }, 'tenant move cancelled: the tenant is being deleted');
  }

  private async copyObjects(src: Database, dst: Database, tenant: string, gen: number, from: string, to: string): Promise<number> {
    let cursor: { resource: string; namespace: string; name: string } | undefined;
    let copied = 0;
    let reported = 0;
    for (;;) {
      this.checkpoint(tenant);
      const c = await this.deps.moves.copyObjects(src, dst, tenant, gen, cursor, BATCH);
      if (!c) return copied;
      cursor = c;
      copied += c.count;
      this.metrics.copied.inc({ kind: 'objects' }, c.count);
      if (copied - reported >= 10_000) {
        reported = copied;
        await this.guarded(tenant, gen, from, true, (t) => {
          t.status = { ...t.status, conditions: withConditions(t, condition(t, 'Moving', 'True', 'Copying', `copying to shard ${to}: ${copied} objects so far`)) };
        });
      }
    }
  }

  /** Copies the kept history up to `upTo` as it is; returns `upTo`. */
  private async copyHistory(src: Database, dst: Database, tenant: string, gen: number, after: number, upTo: number): Promise<number> {
    let last = after;
    for (;;) {
      this.checkpoint(tenant);
      const r = await this.deps.moves.copyChanges(src, dst, tenant, gen, last, upTo, BATCH, false);
      if (!r) return upTo;
      last = r.last;
      this.metrics.copied.inc({ kind: 'changes' }, r.count);
    }
  }

  /** Copies what changed while copying, round after round, until a round is small; returns the revision copied up to. */
  private async catchUp(src: Database, dst: Database, tenant: string, gen: number, from: number): Promise<number> {
    let last = from;
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const upTo = (await this.deps.moves.departure(src, tenant))?.current ?? last;
      let n = 0;
      for (;;) {
        this.checkpoint(tenant);
        const r = await this.deps.moves.copyChanges(src, dst, tenant, gen, last, upTo, BATCH, true);
        if (!r) break;
        last = r.last;
        n += r.count;
        this.metrics.copied.inc({ kind: 'changes' }, r.count);
      }
      last = Math.max(last, upTo);
      if (n < SMALL_DELTA) break;
    }
    return last;
  }

  /** The directory switch, only while `gen` holds the move and the tenant lives on `from` and is not being deleted. */
  private async switchTo(tenant: string, gen: number, from: string, to: string, since: number, objects: number): Promise<void> {
    await this.guarded(tenant, gen, from, true, (t) => {
      if (shardsOf(t).to !== to) throw new StaleMoveError(`tenant ${tenant} no longer asks for shard ${to}`);
      t.status = {
        ...t.status,
        shard: to,
        shardResourceVersion: String(since),
        conditions: withConditions(t, condition(t, 'Moving', 'False', 'Moved', `moved to shard ${to}`), condition(t, 'Moved', 'True', 'Moved', `moved to shard ${to} with ${objects} objects; resourceVersions continue from ${since}`)),
      };
    });
  }

  /**
   * After the grace period, removes the tenant's rows from the shard it
   * left (in the background), fenced by the move's generation. When that
   * fails, the leftover sweep removes them later.
   */
  private depart(tenant: string, gen: number, from: string, src: Database | undefined): void {
    if (!src) return;
    const run = (async () => {
      await new Promise((r) => setTimeout(r, this.deps.graceMs ?? DEPARTURE_GRACE_MS));
      // Moved back meanwhile: the rows there are its live ones again (and a newer generation holds them).
      if ((await this.tenant(tenant))?.status?.shard === from) return;
      await this.deps.moves.discard(src, tenant, gen);
      this.deps.logger.info({ tenant, from }, 'tenant move: rows removed from the shard it left');
    })().catch((err) => this.deps.logger.warn({ tenant, from, err: (err as Error).message }, 'tenant move: removing the rows it left failed; the leftover sweep will'));
    this.departures.add(run);
    void run.finally(() => this.departures.delete(run));
  }
}
