import type { Logger } from 'pino';
import { Counter, Histogram, type Registry } from 'prom-client';
import { type Database, DEFAULT_SHARD, type ObjectStoreRepository, type TenantMoveRepository } from '@plinth/storage';
import { ApiError, isPlainObject, type KubeObject, rfc3339Now } from '@plinth/apimachinery';
import type { Controller } from '../controllers/controller.js';
import type { ControllerManager } from '../controllers/controller-manager.js';
import type { WorkQueue } from '../controllers/work-queue.js';
import { PLATFORM_TENANT, type TenantCondition, type TenantObject, TENANT_STORAGE_RESOURCE } from '../kinds/tenant/tenant-api.js';
import { tenantResource } from '../kinds/tenant/tenant.resource.js';
import type { ResourceStoreService } from '../store/resource-store.service.js';
import { systemWriteContext } from '../store/write-context.js';
import type { ObserveChanges } from '../watch/observe-changes.js';
import type { ShardPool } from '../shards/shard-pool.js';

/** Rows read and written per statement while copying. */
const BATCH = 2000;
/** Catch-up rounds before the fence, and the delta small enough to fence on. */
const MAX_ROUNDS = 20;
const SMALL_DELTA = 200;
/** How long the shard a tenant left keeps its rows after the switch, for replicas that have not seen it yet. */
export const DEPARTURE_GRACE_MS = 5000;

/** What the mover is built from. */
export interface TenantMoverDeps {
  pool: Pick<ShardPool, 'dbOfShard'>;
  moves: TenantMoveRepository;
  objects: Pick<ObjectStoreRepository, 'get'>;
  store: Pick<ResourceStoreService, 'systemUpdate'>;
  observe: ObserveChanges;
  /** Every Tenant object now: a new leader resumes the moves the previous one left (a crash mid-move). */
  listTenants: () => Promise<TenantObject[]>;
  queues: Pick<ControllerManager, 'queue'>;
  registry: Registry;
  logger: Logger;
  /** How long the left shard keeps the tenant's rows after the switch (tests shorten it). */
  graceMs?: number;
}

function shardsOf(t: TenantObject): { from: string; to: string | undefined } {
  const to = isPlainObject(t.spec) && typeof t.spec.shard === 'string' && t.spec.shard ? t.spec.shard : undefined;
  return { from: t.status?.shard || DEFAULT_SHARD, to };
}

/** A metav1.Condition of `type`, keeping its transition time when its status is unchanged. */
function condition(t: TenantObject, type: string, status: TenantCondition['status'], reason: string, message: string): TenantCondition {
  const old = t.status?.conditions?.find((c) => c.type === type);
  return { type, status, reason, message, lastTransitionTime: old && old.status === status ? old.lastTransitionTime : rfc3339Now(), observedGeneration: t.metadata.generation };
}

function withConditions(t: TenantObject, ...set: TenantCondition[]): TenantCondition[] {
  const types = new Set(set.map((c) => c.type));
  return [...(t.status?.conditions ?? []).filter((c) => !types.has(c.type)), ...set];
}

class MoveMetrics {
  readonly moves: Counter<'result'>;
  readonly duration: Histogram<string>;
  readonly fence: Histogram<string>;
  readonly copied: Counter<'kind'>;

  constructor(registry: Registry) {
    this.moves = new Counter({ name: 'plinth_tenant_move_total', help: 'Tenant moves between shards, by result (moved, rolled_back).', labelNames: ['result'] as const, registers: [registry] });
    this.duration = new Histogram({ name: 'plinth_tenant_move_duration_seconds', help: 'Time from the start of a tenant move to its switch.', buckets: [0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300], registers: [registry] });
    this.fence = new Histogram({ name: 'plinth_tenant_move_fence_seconds', help: 'Time a moving tenant\'s writes were fenced (waiting) before the switch.', buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5], registers: [registry] });
    this.copied = new Counter({ name: 'plinth_tenant_move_copied_rows_total', help: 'Rows copied by tenant moves, by kind (objects, changes).', labelNames: ['kind'] as const, registers: [registry] });
  }
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
 */
export class TenantMover implements Controller {
  readonly name = 'tenant-mover';
  private readonly queue: WorkQueue;
  private readonly metrics: MoveMetrics;
  private stopObserving: (() => void) | undefined;
  private readonly departures = new Set<Promise<void>>();

  constructor(private readonly deps: TenantMoverDeps) {
    this.metrics = new MoveMetrics(deps.registry);
    this.queue = deps.queues.queue({ name: this.name, workers: 2, process: (tenant) => this.reconcile(tenant) });
  }

  async start(): Promise<void> {
    this.queue.start();
    this.stopObserving = this.deps.observe(TENANT_STORAGE_RESOURCE, {
      onChange: (c) => {
        if (c.key.tenant === PLATFORM_TENANT && c.type !== 'DELETED') this.queueIfMoving(c.object as TenantObject);
      },
      onReset: () => void this.resync(),
    });
    await this.resync();
  }

  /** Queues every tenant whose Tenant asks for another shard (a move the previous leader did not finish starts again). */
  private async resync(): Promise<void> {
    try {
      for (const t of await this.deps.listTenants()) this.queueIfMoving(t);
    } catch (err) {
      this.deps.logger.warn({ err: (err as Error).message }, 'tenant mover: listing tenants failed; moves resume on their next change');
    }
  }

  private queueIfMoving(t: TenantObject): void {
    const { from, to } = shardsOf(t);
    if (to && to !== from && t.metadata.name) this.queue.add(t.metadata.name);
  }

  async stop(): Promise<void> {
    this.stopObserving?.();
    this.stopObserving = undefined;
    await this.queue.shutDown();
    await Promise.all(this.departures);
  }

  /** Moves `tenant` if its Tenant asks for another shard than it lives on. Never throws for a failed move (it rolls back). */
  private async reconcile(tenant: string): Promise<void> {
    const t = await this.tenant(tenant);
    if (!t || t.metadata.deletionTimestamp) return;
    const { from, to } = shardsOf(t);
    if (!to || to === from) return;
    await this.move(tenant, from, to);
  }

  private async tenant(name: string): Promise<TenantObject | undefined> {
    return (await this.deps.objects.get({ tenant: PLATFORM_TENANT, resource: TENANT_STORAGE_RESOURCE, namespace: '', name }, undefined, true))?.body as TenantObject | undefined;
  }

  private async move(tenant: string, from: string, to: string): Promise<void> {
    const started = performance.now();
    const log = this.deps.logger.child({ tenant, from, to });
    let src: Database | undefined;
    let dst: Database | undefined;
    let fenced = false;
    try {
      src = this.deps.pool.dbOfShard(from, tenant);
      dst = this.deps.pool.dbOfShard(to, tenant);
      await this.progress(tenant, 'Copying', `copying to shard ${to}`);
      const departure = await this.deps.moves.departure(src, tenant);
      if (!departure) throw new Error(`tenant ${tenant} has no rows on shard ${from}`);
      await this.deps.moves.prepareArrival(dst, tenant, departure);
      const objects = await this.copyObjects(src, dst, tenant, to);
      let last = await this.copyHistory(src, dst, tenant, departure.historyFloor, departure.current);
      last = await this.catchUp(src, dst, tenant, last);
      await this.progress(tenant, 'Switching', `${objects} objects copied; writes wait while the last changes are copied`);
      const fenceStart = performance.now();
      const departedAt = await this.deps.moves.fence(src, tenant, true);
      fenced = true;
      if (departedAt === undefined) throw new Error(`tenant ${tenant} left shard ${from} during the move`);
      while (true) {
        const r = await this.deps.moves.copyChanges(src, dst, tenant, last, departedAt, BATCH, true);
        if (!r) break;
        last = r.last;
      }
      await this.deps.moves.copyRest(src, dst, tenant);
      const since = await this.deps.moves.arrive(dst, tenant, departedAt);
      await this.switchTo(tenant, to, since, objects);
      this.metrics.fence.observe((performance.now() - fenceStart) / 1000);
      this.metrics.duration.observe((performance.now() - started) / 1000);
      this.metrics.moves.inc({ result: 'moved' });
      log.info({ objects, since, fencedMs: Math.round(performance.now() - fenceStart) }, 'tenant moved');
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      log.warn({ err: message }, 'tenant move failed; rolling back');
      if (fenced && src) await this.deps.moves.fence(src, tenant, false).catch((e) => log.error({ err: (e as Error).message }, 'could not unfence the source'));
      if (dst) await this.deps.moves.discard(dst, tenant).catch(() => undefined);
      await this.rollBack(tenant, from, to, message).catch((e) => log.error({ err: (e as Error).message }, 'could not record the rollback'));
      this.metrics.moves.inc({ result: 'rolled_back' });
      return;
    }
    this.depart(tenant, from, src);
  }

  private async copyObjects(src: Database, dst: Database, tenant: string, to: string): Promise<number> {
    let cursor: { resource: string; namespace: string; name: string } | undefined;
    let copied = 0;
    let reported = 0;
    for (;;) {
      const c = await this.deps.moves.copyObjects(src, dst, tenant, cursor, BATCH);
      if (!c) return copied;
      cursor = c;
      copied += c.count;
      this.metrics.copied.inc({ kind: 'objects' }, c.count);
      if (copied - reported >= 10_000) {
        reported = copied;
        await this.progress(tenant, 'Copying', `copying to shard ${to}: ${copied} objects so far`);
      }
    }
  }

  /** Copies the kept history up to `upTo` as it is; returns `upTo`. */
  private async copyHistory(src: Database, dst: Database, tenant: string, after: number, upTo: number): Promise<number> {
    let last = after;
    for (;;) {
      const r = await this.deps.moves.copyChanges(src, dst, tenant, last, upTo, BATCH, false);
      if (!r) return upTo;
      last = r.last;
      this.metrics.copied.inc({ kind: 'changes' }, r.count);
    }
  }

  /** Copies what changed while copying, round after round, until a round is small; returns the revision copied up to. */
  private async catchUp(src: Database, dst: Database, tenant: string, from: number): Promise<number> {
    let last = from;
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const upTo = (await this.deps.moves.departure(src, tenant))?.current ?? last;
      let n = 0;
      for (;;) {
        const r = await this.deps.moves.copyChanges(src, dst, tenant, last, upTo, BATCH, true);
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

  /** The directory switch: the Tenant says where it lives now, from which revision, and that it moved. */
  private async switchTo(tenant: string, to: string, since: number, objects: number): Promise<void> {
    await this.deps.store.systemUpdate(systemWriteContext(PLATFORM_TENANT, tenantResource), tenant, (o: KubeObject) => {
      const t = o as TenantObject;
      t.status = {
        ...t.status,
        shard: to,
        shardResourceVersion: String(since),
        conditions: withConditions(t, condition(t, 'Moving', 'False', 'Moved', `moved to shard ${to}`), condition(t, 'Moved', 'True', 'Moved', `moved to shard ${to} with ${objects} objects; resourceVersions continue from ${since}`)),
      };
    });
  }

  private async progress(tenant: string, reason: string, message: string): Promise<void> {
    await this.deps.store.systemUpdate(systemWriteContext(PLATFORM_TENANT, tenantResource), tenant, (o: KubeObject) => {
      const t = o as TenantObject;
      t.status = { ...t.status, conditions: withConditions(t, condition(t, 'Moving', 'True', reason, message)) };
    });
  }

  /** The tenant stays where it was: `spec.shard` back to it, and why the move failed. */
  private async rollBack(tenant: string, from: string, to: string, why: string): Promise<void> {
    try {
      await this.deps.store.systemUpdate(systemWriteContext(PLATFORM_TENANT, tenantResource), tenant, (o: KubeObject) => {
        const t = o as TenantObject;
        t.spec = { ...(t.spec ?? {}), shard: from };
        t.status = { ...t.status, conditions: withConditions(t, condition(t, 'Moving', 'False', 'MoveFailed', `the move to shard ${to} failed and was rolled back; the tenant stays on shard ${from}: ${why}`)) };
      });
    } catch (err) {
      if (!(err instanceof ApiError && err.code === 404)) throw err;
    }
  }

  /** After the grace period, removes the tenant's rows from the shard it left (in the background). */
  private depart(tenant: string, from: string, src: Database | undefined): void {
    if (!src) return;
    const run = (async () => {
      await new Promise((r) => setTimeout(r, this.deps.graceMs ?? DEPARTURE_GRACE_MS));
      // Moved back meanwhile: the rows there are its live ones again.
      if ((await this.tenant(tenant))?.status?.shard === from) return;
      await this.deps.moves.discard(src, tenant);
      this.deps.logger.info({ tenant, from }, 'tenant move: rows removed from the shard it left');
    })().catch((err) => this.deps.logger.warn({ tenant, from, err: (err as Error).message }, 'tenant move: removing the rows it left failed'));
    this.departures.add(run);
    void run.finally(() => this.departures.delete(run));
  }
}
