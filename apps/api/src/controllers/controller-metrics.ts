import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

const DURATION_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/**
 * The controllers' Prometheus metrics, as upstream's workqueue metrics
 * (`workqueue_*{name}`, here `plinth_workqueue_*`), with failures counted
 * apart from retries, and `plinth_leader{controller}`: 1 on the replica
 * that runs the controller.
 */
export class ControllerMetrics {
  /** Keys waiting to be processed. */
  readonly depth: Gauge<'name'>;
  /** Keys added (each add, deduplicated or not). */
  readonly adds: Counter<'name'>;
  /** How long a key waited before a worker took it. */
  readonly queueDuration: Histogram<'name'>;
  /** How long processing one key took. */
  readonly workDuration: Histogram<'name'>;
  /** Keys queued again after a failure (with backoff). */
  readonly retries: Counter<'name'>;
  /** Processing attempts that failed. */
  readonly failures: Counter<'name'>;
  /** 1 while this replica runs the controller. */
  readonly leader: Gauge<'controller'>;

  constructor(registry: Registry) {
    const registers = [registry];
    this.depth = new Gauge({ name: 'plinth_workqueue_depth', help: 'Current depth of a controller work queue.', labelNames: ['name'], registers });
    this.adds = new Counter({ name: 'plinth_workqueue_adds_total', help: 'Keys added to a controller work queue.', labelNames: ['name'], registers });
    this.queueDuration = new Histogram({
      name: 'plinth_workqueue_queue_duration_seconds',
      help: 'How long a key stays in a controller work queue before it is processed.',
      labelNames: ['name'],
      buckets: DURATION_BUCKETS,
      registers,
    });
    this.workDuration = new Histogram({
      name: 'plinth_workqueue_work_duration_seconds',
      help: 'How long processing a key of a controller work queue takes.',
      labelNames: ['name'],
      buckets: DURATION_BUCKETS,
      registers,
    });
    this.retries = new Counter({ name: 'plinth_workqueue_retries_total', help: 'Keys of a controller work queue queued again after a failure.', labelNames: ['name'], registers });
    this.failures = new Counter({ name: 'plinth_workqueue_failures_total', help: 'Failed attempts to process a key of a controller work queue.', labelNames: ['name'], registers });
    this.leader = new Gauge({ name: 'plinth_leader', help: '1 while this replica runs the controller (leader elected in cluster mode), else 0.', labelNames: ['controller'], registers });
  }
}
