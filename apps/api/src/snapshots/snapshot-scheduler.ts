import type { Logger } from 'pino';
import type { KubeObject } from '@plinth/apimachinery';
import type { ControllerManager } from '../controllers/controller-manager.js';
import { every, InformerController, type KeySource, onInformer } from '../controllers/informer-controller.js';
import type { SharedInformer } from '../controllers/shared-informer.js';
import { PLATFORM_TENANT, SNAPSHOT_CONDITION, type TenantObject } from '../kinds/tenant/tenant-api.js';
import { prepareExport, type SnapshotExportDeps } from './snapshot-export.js';
import type { SnapshotMetrics } from './snapshot-metrics.js';
import { nextRun, planOf, type PlatformSnapshotPolicy, type SnapshotPlan } from './snapshot-schedule.js';
import { RecipientError } from './snapshot-secrets.js';
import { scheduledSnapshotName, type SnapshotTarget } from './snapshot-target.js';
import { type TenantStatusWriter, withCondition } from './tenant-status.js';

/** How often the scheduler looks for tenants whose next snapshot is due. */
export const SCHEDULER_TICK_MS = 1000;

/** What the scheduler reads and writes through. */
export interface SnapshotSchedulerDeps {
  /** The Tenant objects (the platform's). */
  tenantObjects: SharedInformer;
  queues: Pick<ControllerManager, 'queue'>;
  exports: SnapshotExportDeps;
  target: SnapshotTarget;
  platform: PlatformSnapshotPolicy;
  writeStatus: TenantStatusWriter;
  metrics: SnapshotMetrics;
  logger: Logger;
}

/** What one snapshot wrote. */
interface Written {
  location: string;
  revision: number;
  bytes: number;
  objects: number;
  deleted: number;
}

/**
 * Scheduled snapshots (docs/snapshots.md): a controller of the
 * ControllerManager, so one replica runs it. Every second it queues the
 * Active tenants that have a schedule (spec.snapshots.schedule, else
 * PLINTH_SNAPSHOT_SCHEDULE); a tenant whose schedule names a time after
 * its status.snapshots.lastScheduleTime (else its creation) and not after
 * now gets one snapshot (missed times are not caught up, as a CronJob's
 * are not), written to the target, after which its oldest scheduled
 * snapshots beyond `keep` are deleted. The outcome is the Tenant's
 * SnapshotSucceeded condition (Unknown while running) and status.snapshots,
 * and the plinth_snapshot_* metrics. A failure is reported, not retried:
 * the next scheduled time tries again.
 */
export class SnapshotScheduler extends InformerController {
  /** When this replica last started each tenant's snapshot (the informer may not have the status it wrote yet). */
  private readonly started = new Map<string, Date>();
  /** Each tenant's next scheduled time (ms) as last computed: the tick queues only those due (or not computed yet). */
  private readonly next = new Map<string, number>();

  constructor(private readonly deps: SnapshotSchedulerDeps) {
    super({ name: 'snapshot-scheduler', workers: 2, queues: deps.queues });
  }

  protected sources(): KeySource[] {
    return [
      onInformer(this.deps.tenantObjects, (e) => e.object.key.name),
      every(SCHEDULER_TICK_MS, () => {
        const now = Date.now();
        return this.deps.tenantObjects
          .list(PLATFORM_TENANT)
          .map((o) => o.key.name)
          .filter((n) => (this.next.get(n) ?? 0) <= now);
      }),
    ];
  }

  protected async reconcile(name: string): Promise<void> {
    const cached = this.deps.tenantObjects.get(PLATFORM_TENANT, '', name);
    const t = cached?.body as TenantObject | undefined;
    if (!t || t.metadata.deletionTimestamp) {
      this.started.delete(name);
      this.next.delete(name);
      this.deps.metrics.forget(name);
      return;
    }
    const plan = planOf(t, this.deps.platform);
    // Without a plan nothing is due until the Tenant changes (its informer event queues it again).
    if (!plan) this.next.set(name, Infinity);
    if (!plan || t.status?.phase !== 'Active') return;
    const now = new Date();
    const recorded = t.status?.snapshots?.lastScheduleTime ?? (t as KubeObject).metadata.creationTimestamp;
    const last = latest(recorded ? new Date(recorded) : now, this.started.get(name));
    const next = nextRun(plan.schedule, last);
    this.next.set(name, next ? next.getTime() : Infinity);
    if (!next || next > now) return;
    this.started.set(name, now);
    this.next.delete(name);
    await this.snapshot(t, plan, now);
  }

  /** Takes one snapshot of `t` and reports it. Never throws for the snapshot's own failures. */
  private async snapshot(t: TenantObject, plan: SnapshotPlan, now: Date): Promise<void> {
    const name = t.metadata.name!;
    const scheduled = now.toISOString();
    await this.deps.writeStatus(name, (s, cur) =>
      withCondition({ ...s, snapshots: { ...s.snapshots, lastScheduleTime: scheduled } }, cur, SNAPSHOT_CONDITION, 'Unknown', 'Running', `writing a snapshot to ${this.deps.target.description}`),
    );
    const timer = this.deps.metrics.duration.startTimer();
    let written: Written;
    try {
      written = await this.write(t, plan, now);
    } catch (err) {
      timer({ result: 'failure' });
      this.deps.metrics.failures.inc({ tenant: name });
      const reason = err instanceof RecipientError ? 'NoRecipient' : 'Failed';
      const message = `the snapshot of ${scheduled} failed: ${(err as Error).message}`;
      this.deps.logger.warn({ tenant: name, err: (err as Error).message }, 'scheduled tenant snapshot failed');
      await this.deps.writeStatus(name, (s, cur) => withCondition(s, cur, SNAPSHOT_CONDITION, 'False', reason, message));
      return;
    }
    timer({ result: 'success' });
    const m = this.deps.metrics;
    m.bytes.inc(written.bytes);
    m.objects.inc(written.objects);
    m.deleted.inc(written.deleted);
    m.lastBytes.set({ tenant: name }, written.bytes);
    m.lastObjects.set({ tenant: name }, written.objects);
    m.lastSuccess.set({ tenant: name }, Date.now() / 1000);
    const done = new Date().toISOString();
    this.deps.logger.info({ tenant: name, ...written }, 'scheduled tenant snapshot written');
    await this.deps.writeStatus(name, (s, cur) =>
      withCondition(
        { ...s, snapshots: { lastScheduleTime: scheduled, lastSuccessfulTime: done, location: written.location, revision: written.revision, bytes: written.bytes, objects: written.objects } },
        cur,
        SNAPSHOT_CONDITION,
        'True',
        'Succeeded',
        `${written.objects} objects at revision ${written.revision} written to ${written.location} in ${this.deps.target.description} (${written.bytes} bytes); keeping ${plan.keep}, ${written.deleted} older deleted`,
      ),
    );
  }

  /** Exports `t` to the target, then deletes its scheduled snapshots beyond the newest `plan.keep`. */
  private async write(t: TenantObject, plan: SnapshotPlan, now: Date): Promise<Written> {
    const name = t.metadata.name!;
    const prepared = await prepareExport(this.deps.exports, t, {}, plan.recipients);
    const location = scheduledSnapshotName(name, now, prepared.revision);
    let lines = 0;
    let last: Buffer = Buffer.alloc(0);
    const counted = async function* (chunks: AsyncIterable<Buffer>) {
      for await (const c of chunks) {
        for (const byte of c) if (byte === 0x0a) lines++;
        last = c;
        yield c;
      }
    };
    const bytes = await this.deps.target.write(location, counted(prepared.chunks));
    // The export ends with its trailer; without it the snapshot is truncated (the export stopped early).
    if (!last.toString('utf8').split('\n').some((l) => l.startsWith('{"end":'))) {
      await this.deps.target.remove(location);
      throw new Error('the export ended without its trailer');
    }
    const scheduled = (await this.deps.target.list(name)).filter((e) => e.scheduled);
    const old = scheduled.slice(0, Math.max(0, scheduled.length - plan.keep));
    for (const e of old) await this.deps.target.remove(e.location);
    return { location, revision: prepared.revision, bytes, objects: Math.max(0, lines - 2), deleted: old.length };
  }
}

function latest(a: Date, b: Date | undefined): Date {
  return b && b > a ? b : a;
}
