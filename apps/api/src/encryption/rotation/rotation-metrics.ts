import { Counter, Gauge, type Registry } from 'prom-client';

/** The rotation job's metrics (`plinth_encryption_rotation_*`), by shard. */
export class RotationMetrics {
  /** Rows checked, by table (`objects`, `changes`) and result (`current`, `rewritten`, `superseded`, `failed`). */
  readonly rows: Counter<'shard' | 'table' | 'result'>;
  /** 1 while a pass runs on the shard (on the replica that runs the job). */
  readonly running: Gauge<'shard'>;
  /** Rows checked by the pass in progress or last finished (it continues from its cursor after a restart). */
  readonly checked: Gauge<'shard'>;
  /** The planner's estimate of the rows the pass reads (objects and changes). */
  readonly estimated: Gauge<'shard'>;
  /** When the last pass ended with every row under the first provider. */
  readonly completed: Gauge<'shard'>;

  constructor(registry: Registry) {
    const registers = [registry];
    this.rows = new Counter({
      name: 'plinth_encryption_rotation_rows_total',
      help: 'Stored rows checked by the encryption rotation job, by shard, table (objects, changes) and result (current, rewritten, superseded, failed).',
      labelNames: ['shard', 'table', 'result'],
      registers,
    });
    this.running = new Gauge({ name: 'plinth_encryption_rotation_running', help: '1 while an encryption rotation pass runs on the shard.', labelNames: ['shard'], registers });
    this.checked = new Gauge({ name: 'plinth_encryption_rotation_checked_rows', help: 'Rows the current (or last) encryption rotation pass has checked on the shard.', labelNames: ['shard'], registers });
    this.estimated = new Gauge({ name: 'plinth_encryption_rotation_estimated_rows', help: 'Estimated rows (objects and change log) the encryption rotation pass reads on the shard.', labelNames: ['shard'], registers });
    this.completed = new Gauge({
      name: 'plinth_encryption_rotation_last_completion_timestamp_seconds',
      help: 'When the last encryption rotation pass on the shard finished.',
      labelNames: ['shard'],
      registers,
    });
  }
}
