import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

/**
 * The `plinth_snapshot_*` metrics of scheduled snapshots and restores from
 * spec.source: duration, bytes and objects written, failures, the last
 * success per tenant, snapshots deleted to keep N. One per registry.
 */
export class SnapshotMetrics {
  readonly duration: Histogram<'result'>;
  readonly bytes: Counter;
  readonly objects: Counter;
  readonly lastBytes: Gauge<'tenant'>;
  readonly lastObjects: Gauge<'tenant'>;
  readonly failures: Counter<'tenant'>;
  readonly lastSuccess: Gauge<'tenant'>;
  readonly deleted: Counter;
  readonly restores: Counter<'result'>;

  constructor(registry: Registry) {
    const registers = [registry];
    this.duration = new Histogram({
      name: 'plinth_snapshot_duration_seconds',
      help: 'Time taken by a scheduled snapshot (export and write to the target), by result (success, failure).',
      labelNames: ['result'],
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800],
      registers,
    });
    this.bytes = new Counter({ name: 'plinth_snapshot_bytes_total', help: 'Bytes of the scheduled snapshots written.', registers });
    this.objects = new Counter({ name: 'plinth_snapshot_objects_total', help: 'Objects in the scheduled snapshots written.', registers });
    this.lastBytes = new Gauge({ name: 'plinth_snapshot_last_bytes', help: 'Bytes of the newest scheduled snapshot of a tenant.', labelNames: ['tenant'], registers });
    this.lastObjects = new Gauge({ name: 'plinth_snapshot_last_objects', help: 'Objects in the newest scheduled snapshot of a tenant.', labelNames: ['tenant'], registers });
    this.failures = new Counter({ name: 'plinth_snapshot_failures_total', help: 'Scheduled snapshots that failed, by tenant.', labelNames: ['tenant'], registers });
    this.lastSuccess = new Gauge({
      name: 'plinth_snapshot_last_success_timestamp_seconds',
      help: 'Unix time of the newest scheduled snapshot of a tenant written whole.',
      labelNames: ['tenant'],
      registers,
    });
    this.deleted = new Counter({ name: 'plinth_snapshot_deleted_total', help: 'Scheduled snapshots deleted to keep each tenant\'s newest N.', registers });
    this.restores = new Counter({ name: 'plinth_snapshot_restores_total', help: 'Restores of new tenants from spec.source, by result (success, failure).', labelNames: ['result'], registers });
  }

  /** Forgets a deleted tenant's series. */
  forget(tenant: string): void {
    for (const g of [this.lastBytes, this.lastObjects, this.lastSuccess]) g.remove({ tenant });
    this.failures.remove({ tenant });
  }
}
