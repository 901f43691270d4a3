import type { Logger } from 'pino';
import { AdvisoryLockElector, type ElectionTiming, DEFAULT_ELECTION_TIMING } from '@plinth/storage';
import type { Controller } from './controller.js';
import type { ControllerMetrics } from './controller-metrics.js';
import { WorkQueue, type WorkQueueOptions } from './work-queue.js';

/** How the {@link ControllerManager} decides who runs the controllers. */
export type ControllerMode =
  /** One process: every controller runs here, without election. */
  | { kind: 'single-node' }
  /** Several replicas on one database: each controller is elected with a PostgreSQL advisory lock. */
  | { kind: 'cluster'; databaseUrl: string; timing?: ElectionTiming };

/**
 * kube-controller-manager inside the server: modules register their
 * controllers here at construction; once the server listens, each runs on
 * exactly one replica. On a single node they all run in process; in cluster
 * mode each is leader-elected on its own (a session-level PostgreSQL
 * advisory lock per controller, held on one dedicated connection, see
 * AdvisoryLockElector), started when this replica wins it and stopped when
 * it loses it, so a replica that dies hands every controller it ran to
 * another within the lease duration. Gives controllers their work queues
 * (with upstream's workqueue metrics) and reports `plinth_leader`.
 */
export class ControllerManager {
  private readonly controllers = new Map<string, Controller>();
  private readonly running = new Set<string>();
  private readonly transitions = new Map<string, Promise<void>>();
  private elector: AdvisoryLockElector | undefined;
  private started = false;

  constructor(
    private readonly mode: ControllerMode,
    private readonly metrics: ControllerMetrics,
    private readonly logger: Logger,
  ) {}

  /** Registers `controller` (before start; names are unique). */
  register(controller: Controller): void {
    if (this.controllers.has(controller.name)) throw new Error(`controller "${controller.name}" registered twice`);
    if (this.started) throw new Error(`controller "${controller.name}" registered after the controllers started`);
    this.controllers.set(controller.name, controller);
    this.metrics.leader.set({ controller: controller.name }, 0);
  }

  /** A work queue for a controller, reporting the workqueue metrics under `name`. */
  queue(opts: Omit<WorkQueueOptions, 'metrics' | 'logger'>): WorkQueue {
    return new WorkQueue({ ...opts, metrics: this.metrics, logger: this.logger });
  }

  /** True while this replica runs `name`. */
  isRunning(name: string): boolean {
    return this.running.has(name);
  }

  /** Names of the registered controllers. */
  names(): string[] {
    return [...this.controllers.keys()];
  }

  /**
   * The longest a change waits for a controller in this mode: none on a
   * single node (they run here); in cluster mode, the lease duration plus a
   * retry period (a leader that stopped answering is replaced by then).
   */
  get handoverBoundMs(): number {
    if (this.mode.kind === 'single-node') return 0;
    const t = this.mode.timing ?? DEFAULT_ELECTION_TIMING;
    return t.leaseDurationMs + t.retryPeriodMs;
  }

  /** Runs every controller here (single node) or starts running for each (cluster). */
  async start(): Promise<void> {
    if (this.started) return;
    this.started = true;
    if (this.mode.kind === 'single-node') {
      for (const name of this.controllers.keys()) await this.begin(name);
      return;
    }
    this.elector = new AdvisoryLockElector({
      connectionString: this.mode.databaseUrl,
      logger: this.logger,
      timing: this.mode.timing,
      // Not awaited: a controller's start (its resync) must not hold up the election's renewals.
      onStartedLeading: (name) =>
        void this.begin(name).catch(async (err) => {
          this.logger.error({ controller: name, err: (err as Error).message }, 'controller failed to start; giving up its lease');
          await this.elector?.resign(name);
        }),
      onStoppedLeading: (name) => this.end(name),
    });
    for (const name of this.controllers.keys()) this.elector.add(name);
    await this.elector.start();
  }

  /** Stops every controller this replica runs (and, in cluster mode, gives up their leases). */
  async stop(): Promise<void> {
    if (this.elector) await this.elector.stop();
    for (const name of [...this.running]) await this.end(name);
    await Promise.all([...this.transitions.values()]);
  }

  private begin(name: string): Promise<void> {
    return this.transition(name, async () => {
      const c = this.controllers.get(name);
      if (!c || this.running.has(name)) return;
      this.running.add(name);
      this.metrics.leader.set({ controller: name }, 1);
      this.logger.info({ controller: name, mode: this.mode.kind }, 'controller started');
      await c.start();
    });
  }

  private end(name: string): Promise<void> {
    return this.transition(name, async () => {
      const c = this.controllers.get(name);
      if (!c || !this.running.delete(name)) return;
      this.metrics.leader.set({ controller: name }, 0);
      await c.stop();
      this.logger.info({ controller: name }, 'controller stopped');
    });
  }

  /** Starts and stops of one controller run one after the other. */
  private transition(name: string, step: () => Promise<void>): Promise<void> {
    const next = (this.transitions.get(name) ?? Promise.resolve()).then(step);
    const settled = next.catch(() => undefined);
    this.transitions.set(name, settled);
    void settled.then(() => {
      if (this.transitions.get(name) === settled) this.transitions.delete(name);
    });
    return next;
  }
}
