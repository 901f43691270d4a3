import type { Logger } from 'pino';
import type { ControllerMetrics } from './controller-metrics.js';

/** Options of {@link WorkQueue}. */
export interface WorkQueueOptions {
  /** The queue's name (the metrics' `name` label). */
  name: string;
  /** Processes one key; a throw is a failure, retried with backoff. */
  process: (key: string) => Promise<void>;
  /** Keys processed at once (never the same key twice at once). */
  workers: number;
  metrics: ControllerMetrics;
  logger: Logger;
  /** First retry delay, doubled per failure of the same key up to `maxBackoffMs`. */
  baseBackoffMs?: number;
  maxBackoffMs?: number;
}

/**
 * client-go's rate-limited work queue, in process: a key added while it
 * waits is not added twice; a key added while it is processed waits until
 * that processing ends (one key is never processed by two workers); a
 * failure requeues the key after an exponential backoff. Adds are ignored
 * unless the queue runs (the controller does not lead). Reports upstream's
 * workqueue metrics.
 */
export class WorkQueue {
  private readonly waiting = new Map<string, number>();
  private readonly processing = new Set<string>();
  private readonly dirty = new Set<string>();
  private readonly failuresOf = new Map<string, number>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly workers = new Set<Promise<void>>();
  private running = false;

  constructor(private readonly opts: WorkQueueOptions) {
    // Every series exists from the start (a scrape shows 0 failures, not nothing).
    const name = { name: opts.name };
    for (const c of [opts.metrics.adds, opts.metrics.retries, opts.metrics.failures]) c.inc(name, 0);
    opts.metrics.depth.set(name, 0);
  }

  /** True while the queue takes keys. */
  get active(): boolean {
    return this.running;
  }

  /** Keys waiting. */
  get depth(): number {
    return this.waiting.size;
  }

  /** Starts taking keys. */
  start(): void {
    this.running = true;
  }

  /** Stops taking keys, drops those waiting and waits for the ones in progress. */
  async shutDown(): Promise<void> {
    this.running = false;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    this.waiting.clear();
    this.dirty.clear();
    this.failuresOf.clear();
    this.report();
    while (this.workers.size > 0) await Promise.all([...this.workers]);
  }

  /** Queues `key` (once, however often it is added before a worker takes it). */
  add(key: string): void {
    if (!this.running) return;
    this.opts.metrics.adds.inc({ name: this.opts.name });
    if (this.processing.has(key)) {
      this.dirty.add(key);
      return;
    }
    if (this.waiting.has(key)) return;
    this.waiting.set(key, Date.now());
    this.report();
    this.spawn();
  }

  /** Queues `key` after `ms`. */
  addAfter(key: string, ms: number): void {
    if (!this.running) return;
    const t = setTimeout(() => {
      this.timers.delete(t);
      this.add(key);
    }, ms);
    t.unref();
    this.timers.add(t);
  }

  private spawn(): void {
    while (this.workers.size < this.opts.workers && this.workers.size < this.waiting.size) {
      const worker: Promise<void> = this.work().finally(() => this.workers.delete(worker));
      this.workers.add(worker);
    }
  }

  private async work(): Promise<void> {
    while (this.running) {
      const next = this.waiting.entries().next();
      if (next.done) return;
      const [key, addedAt] = next.value;
      this.waiting.delete(key);
      this.processing.add(key);
      this.report();
      this.opts.metrics.queueDuration.observe({ name: this.opts.name }, (Date.now() - addedAt) / 1000);
      const end = this.opts.metrics.workDuration.startTimer({ name: this.opts.name });
      try {
        await this.opts.process(key);
        this.failuresOf.delete(key);
      } catch (err) {
        this.retry(key, err as Error);
      } finally {
        end();
        this.processing.delete(key);
        if (this.dirty.delete(key)) this.add(key);
      }
    }
  }

  private retry(key: string, err: Error): void {
    const n = (this.failuresOf.get(key) ?? 0) + 1;
    this.failuresOf.set(key, n);
    this.opts.metrics.failures.inc({ name: this.opts.name });
    if (!this.running) return;
    const delay = Math.min(this.opts.maxBackoffMs ?? 30_000, (this.opts.baseBackoffMs ?? 100) * 2 ** (n - 1));
    this.opts.logger.warn({ controller: this.opts.name, key: key.split('\u0000').join('/'), attempt: n, retryInMs: delay, err: err.message }, 'controller: processing failed; retrying');
    this.opts.metrics.retries.inc({ name: this.opts.name });
    this.addAfter(key, delay);
  }

  private report(): void {
    this.opts.metrics.depth.set({ name: this.opts.name }, this.waiting.size);
  }
}
