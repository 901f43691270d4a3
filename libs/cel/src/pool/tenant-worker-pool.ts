import { Worker, type ResourceLimits } from 'node:worker_threads';

/**
 * A bounded pool of worker threads (node:worker_threads) shared fairly by
 * tenants, for work that must not block the event loop (evaluating tenants'
 * CEL rules). A worker runs one task at a time; a tenant has at most a
 * share of the workers running its tasks and a bounded queue (beyond it the
 * caller gets WorkerPoolBusyError, to answer 429); freed workers go round
 * robin to the tenants that wait. A task that runs past `taskTimeoutMs` has
 * its worker terminated (V8 stops it wherever it is) and replaced; a worker
 * that crashes is replaced too. Workers start on demand and hold the
 * process open only while busy. The worker script calls {@link serveTasks}.
 */

/** Options of {@link TenantWorkerPool}. */
export interface TenantWorkerPoolOptions {
  /** The worker's module (a file URL of compiled JavaScript that calls serveTasks). */
  script: URL;
  /** The most worker threads. */
  size: number;
  /** The most tasks of one tenant running at once (default: half the workers, at least one). */
  maxRunningPerTenant?: number;
  /** The most tasks of one tenant waiting for a worker (default 32); one more is refused. */
  maxQueuedPerTenant?: number;
  /** The most tasks waiting in all (default 1,024). */
  maxQueued?: number;
  /** The longest one task may hold a worker, ms; past it the worker is terminated and replaced. */
  taskTimeoutMs: number;
  /** V8 heap limits of each worker. */
  resourceLimits?: ResourceLimits;
  /** Told whenever a worker is replaced (`timeout`, `crash`), e.g. for metrics. */
  onReplaced?: (reason: 'timeout' | 'crash', detail: string) => void;
}

/** The tenant's (or the pool's) queue is full: try again later. */
export class WorkerPoolBusyError extends Error {
  constructor(readonly scope: 'tenant' | 'pool') {
    super(scope === 'tenant' ? 'too many evaluations of this tenant are waiting' : 'too many evaluations are waiting');
  }
}

/** The task held its worker longer than the pool allows; the worker was terminated. */
export class WorkerTaskTimeoutError extends Error {
  constructor(readonly ms: number) {
    super(`the evaluation did not finish within ${ms} ms`);
  }
}

/** The worker died (or could not start) while it had the task. */
export class WorkerCrashedError extends Error {}

/** The task's handler threw; `name` is the thrown error's class name. */
export class WorkerTaskError extends Error {
  constructor(
    readonly errorName: string,
    message: string,
  ) {
    super(message);
  }
}

/** What the pool's counters say (for tests and metrics). */
export interface TenantWorkerPoolStats {
  workers: number;
  busy: number;
  queued: number;
  /** Workers replaced so far because a task timed out or the worker crashed. */
  replaced: number;
  /** Tasks completed (answered, successfully or with the handler's error). */
  completed: number;
}

interface Task {
  tenant: string;
  payload: unknown;
  resolve: (v: unknown) => void;
  reject: (e: unknown) => void;
}

interface Slot {
  worker: Worker;
  state: 'starting' | 'idle' | 'busy';
  task?: Task;
  timer?: NodeJS.Timeout;
  seq: number;
}

type WorkerMessage = { ready: true } | { seq: number; ok: true; value: unknown } | { seq: number; ok: false; name: string; message: string };

/** See the module comment. */
export class TenantWorkerPool<In, Out> {
  private readonly slots = new Set<Slot>();
  private readonly queues = new Map<string, Task[]>();
  /** Tenants with waiting tasks, in round-robin order. */
  private readonly ring: string[] = [];
  private readonly running = new Map<string, number>();
  private queuedTotal = 0;
  private replacedCount = 0;
  private completedCount = 0;
  private seq = 0;
  private closed = false;
  private readonly maxRunningPerTenant: number;
  private readonly maxQueuedPerTenant: number;
  private readonly maxQueued: number;

  constructor(private readonly opts: TenantWorkerPoolOptions) {
    if (opts.size < 1) throw new Error('a worker pool needs at least one worker');
    this.maxRunningPerTenant = Math.max(1, Math.min(opts.size, opts.maxRunningPerTenant ?? Math.floor(opts.size / 2)));
    this.maxQueuedPerTenant = opts.maxQueuedPerTenant ?? 32;
    this.maxQueued = opts.maxQueued ?? 1024;
  }

  /**
   * Runs `payload` on a worker for `tenant`; resolves with the handler's
   * answer. Rejects with WorkerPoolBusyError at once when the tenant's (or
   * the pool's) queue is full, WorkerTaskTimeoutError, WorkerCrashedError,
   * or WorkerTaskError (the handler threw).
   */
  run(tenant: string, payload: In): Promise<Out> {
    if (this.closed) return Promise.reject(new WorkerCrashedError('the worker pool is closed'));
    const queue = this.queues.get(tenant) ?? [];
    if (queue.length >= this.maxQueuedPerTenant) return Promise.reject(new WorkerPoolBusyError('tenant'));
    if (this.queuedTotal >= this.maxQueued) return Promise.reject(new WorkerPoolBusyError('pool'));
    return new Promise<Out>((resolve, reject) => {
      queue.push({ tenant, payload, resolve: resolve as (v: unknown) => void, reject });
      if (queue.length === 1) {
        this.queues.set(tenant, queue);
        this.ring.push(tenant);
      }
      this.queuedTotal++;
      this.dispatch();
    });
  }

  /** The pool's counters. */
  stats(): TenantWorkerPoolStats {
    let busy = 0;
    for (const s of this.slots) if (s.state === 'busy') busy++;
    return { workers: this.slots.size, busy, queued: this.queuedTotal, replaced: this.replacedCount, completed: this.completedCount };
  }

  /** The thread ids of the live workers (tests check that a replaced worker is a new thread). */
  threadIds(): number[] {
    return [...this.slots].map((s) => s.worker.threadId);
  }

  /** Terminates every worker; waiting and running tasks are rejected. */
  async close(): Promise<void> {
    this.closed = true;
    const err = new WorkerCrashedError('the worker pool is closed');
    for (const q of this.queues.values()) for (const t of q) t.reject(err);
    this.queues.clear();
    this.ring.length = 0;
    this.queuedTotal = 0;
    const slots = [...this.slots];
    this.slots.clear();
    for (const s of slots) {
      clearTimeout(s.timer);
      s.task?.reject(err);
    }
    await Promise.all(slots.map((s) => s.worker.terminate().catch(() => undefined)));
  }

  /** The next waiting task of a tenant below its share of workers, round robin; removed from its queue. */
  private nextTask(): Task | undefined {
    for (let i = 0; i < this.ring.length; i++) {
      const tenant = this.ring[i];
      if ((this.running.get(tenant) ?? 0) >= this.maxRunningPerTenant) continue;
      const queue = this.queues.get(tenant)!;
      const task = queue.shift()!;
      this.queuedTotal--;
      this.ring.splice(i, 1);
      if (queue.length > 0) this.ring.push(tenant);
      else this.queues.delete(tenant);
      return task;
    }
    return undefined;
  }

  /** How many waiting tasks could start now (their tenant is below its share). */
  private startable(): number {
    let n = 0;
    for (const tenant of this.ring) {
      n += Math.min(this.queues.get(tenant)!.length, Math.max(0, this.maxRunningPerTenant - (this.running.get(tenant) ?? 0)));
    }
    return n;
  }

  private dispatch(): void {
    if (this.closed) return;
    for (const slot of this.slots) {
      if (slot.state !== 'idle') continue;
      const task = this.nextTask();
      if (!task) break;
      this.assign(slot, task);
    }
    let starting = 0;
    for (const s of this.slots) if (s.state === 'starting') starting++;
    let wanted = this.startable() - starting;
    while (wanted-- > 0 && this.slots.size < this.opts.size) this.spawn();
  }

  private assign(slot: Slot, task: Task): void {
    slot.state = 'busy';
    slot.task = task;
    slot.seq = ++this.seq;
    this.running.set(task.tenant, (this.running.get(task.tenant) ?? 0) + 1);
    slot.worker.ref();
    slot.timer = setTimeout(() => this.timedOut(slot), this.opts.taskTimeoutMs);
    try {
      slot.worker.postMessage({ seq: slot.seq, payload: task.payload });
    } catch (err) {
      // Not cloneable: the task's fault, not the worker's.
      this.finish(slot);
      task.reject(err);
      this.dispatch();
    }
  }

  /** Frees `slot` of its task (which the caller settles). */
  private finish(slot: Slot): Task | undefined {
    const task = slot.task;
    clearTimeout(slot.timer);
    slot.timer = undefined;
    slot.task = undefined;
    if (task) {
      const n = (this.running.get(task.tenant) ?? 1) - 1;
      if (n > 0) this.running.set(task.tenant, n);
      else this.running.delete(task.tenant);
    }
    if (this.slots.has(slot)) {
      slot.state = 'idle';
      slot.worker.unref();
    }
    return task;
  }

  private spawn(): void {
    const worker = new Worker(this.opts.script, { resourceLimits: this.opts.resourceLimits, stdout: false, stderr: false });
    const slot: Slot = { worker, state: 'starting', seq: 0 };
    this.slots.add(slot);
    worker.unref();
    worker.on('message', (m: WorkerMessage) => this.onMessage(slot, m));
    worker.on('error', (err) => this.lost(slot, `the worker failed: ${err.message}`));
    worker.on('exit', (code) => this.lost(slot, `the worker exited with code ${code}`));
  }

  private onMessage(slot: Slot, m: WorkerMessage): void {
    if (!this.slots.has(slot)) return;
    if ('ready' in m) {
      slot.state = 'idle';
      this.dispatch();
      return;
    }
    if (slot.state !== 'busy' || m.seq !== slot.seq) return;
    const task = this.finish(slot)!;
    this.completedCount++;
    if (m.ok) task.resolve(m.value);
    else task.reject(new WorkerTaskError(m.name, m.message));
    this.dispatch();
  }

  private timedOut(slot: Slot): void {
    if (!this.slots.has(slot) || slot.state !== 'busy') return;
    this.slots.delete(slot);
    const task = this.finish(slot)!;
    this.replacedCount++;
    void slot.worker.terminate().catch(() => undefined);
    this.opts.onReplaced?.('timeout', `a task ran longer than ${this.opts.taskTimeoutMs} ms`);
    task.reject(new WorkerTaskTimeoutError(this.opts.taskTimeoutMs));
    this.dispatch();
  }

  /** The worker died (or failed to start): its task fails, queued tasks wait for a replacement. */
  private lost(slot: Slot, detail: string): void {
    if (!this.slots.has(slot)) return;
    const wasStarting = slot.state === 'starting';
    this.slots.delete(slot);
    const task = this.finish(slot);
    this.replacedCount++;
    this.opts.onReplaced?.('crash', detail);
    task?.reject(new WorkerCrashedError(detail));
    if (wasStarting) {
      // A worker that cannot start is not retried in a loop: when none is left, what waits fails.
      if (this.slots.size === 0) {
        const err = new WorkerCrashedError(detail);
        for (const q of this.queues.values()) for (const t of q) t.reject(err);
        this.queues.clear();
        this.ring.length = 0;
        this.queuedTotal = 0;
      }
      return;
    }
    this.dispatch();
  }
}
