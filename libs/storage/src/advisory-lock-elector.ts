import { createHash } from 'node:crypto';
import type pg from 'pg';
import { connectSession } from './host-list-connector.js';
import type { PipelineLogger } from './watch/pipeline-logger.js';

/** Timing of {@link AdvisoryLockElector}, named as client-go's leader election. */
export interface ElectionTiming {
  /**
   * The longest a leader that stopped answering (frozen, partitioned) keeps
   * its locks: the server ends its election session after this long without
   * a query (`idle_session_timeout`), which releases them. A leader that
   * dies outright loses them at once (its connection closes).
   */
  leaseDurationMs: number;
  /** A leader that could not confirm its session for this long stops leading (shorter than the lease duration). */
  renewDeadlineMs: number;
  /** How often a candidate tries the locks it lacks and a leader confirms its session. */
  retryPeriodMs: number;
}

/** As upstream's kube-controller-manager: 15 s lease, 10 s renew deadline, 2 s retry period. */
export const DEFAULT_ELECTION_TIMING: ElectionTiming = { leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 };

/** Options of {@link AdvisoryLockElector}. */
export interface AdvisoryLockElectorOptions {
  connectionString: string;
  logger: PipelineLogger;
  /** This process now leads `name`. */
  onStartedLeading(name: string): Promise<void> | void;
  /** This process no longer leads `name` (session lost, renew deadline passed, or stop()). */
  onStoppedLeading(name: string): Promise<void> | void;
  timing?: ElectionTiming;
  /** Namespace of the lock keys (two clusters on one database never share one). */
  keyPrefix?: string;
}

/** The advisory lock key (a signed bigint, as text) of election `name`. */
export function electionLockKey(name: string, prefix = 'plinth controller'): string {
  return createHash('sha256').update(`${prefix} ${name}`).digest().readBigInt64BE(0).toString();
}

/**
 * Elects one leader per name among the processes sharing a database, with
 * session-level PostgreSQL advisory locks held on one dedicated connection
 * per process (the watch relay's scheme, for any number of names). A
 * candidate tries the locks it lacks every retry period; the leader's
 * connection closes when its process dies, so PostgreSQL releases its locks
 * at once and a candidate takes over at its next try. A leader that stops
 * answering without dying loses its session to `idle_session_timeout` (the
 * lease duration); a leader that cannot confirm its session within the
 * renew deadline stops leading by itself (before the server could have
 * released its locks).
 */
export class AdvisoryLockElector {
  private readonly names = new Map<string, string>();
  private readonly leading = new Set<string>();
  private client: pg.Client | undefined;
  private confirmedAt = 0;
  private stopped = true;
  private timer: NodeJS.Timeout | undefined;
  private ticking: Promise<void> = Promise.resolve();
  private readonly timing: ElectionTiming;

  constructor(private readonly opts: AdvisoryLockElectorOptions) {
    this.timing = opts.timing ?? DEFAULT_ELECTION_TIMING;
  }

  /** Adds a name to run for (before or after start). */
  add(name: string): void {
    this.names.set(name, electionLockKey(name, this.opts.keyPrefix));
  }

  /** True while the election connection is up. */
  get connected(): boolean {
    return this.client !== undefined;
  }

  /** True while this process leads `name`. */
  isLeader(name: string): boolean {
    return this.leading.has(name);
  }

  /** Tries for the locks now and then every retry period. */
  async start(): Promise<void> {
    if (!this.stopped) return;
    this.stopped = false;
    await this.tick();
    this.timer = setInterval(() => {
      this.ticking = this.ticking.then(() => this.tick());
    }, this.timing.retryPeriodMs);
    this.timer.unref();
  }

  /** Stops leading everything (releasing the locks) and closes the connection. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.ticking;
    await this.dropConnection();
  }

  private async tick(): Promise<void> {
    if (this.stopped) return;
    if (this.leading.size > 0 && Date.now() - this.confirmedAt > this.timing.renewDeadlineMs) {
      this.opts.logger.warn({ leading: [...this.leading] }, 'leader election: session not confirmed within the renew deadline; stepping down');
      await this.dropConnection();
    }
    const sentAt = Date.now();
    try {
      const client = this.client ?? (await this.connect());
      const wanted = [...this.names].filter(([name]) => !this.leading.has(name));
      // One round trip confirms the session and tries every lock this process lacks.
      const { rows } = await client.query<{ key: string; locked: boolean }>(
        'SELECT k::text AS key, pg_try_advisory_lock(k) AS locked FROM unnest($1::bigint[]) AS k',
        [wanted.map(([, key]) => key)],
      );
      this.confirmedAt = sentAt;
      for (const [name, key] of wanted) {
        if (!rows.some((r) => r.key === key && r.locked) || this.stopped) continue;
        this.leading.add(name);
        this.opts.logger.info({ controller: name }, 'leader election: leading');
        try {
          await this.opts.onStartedLeading(name);
        } catch (err) {
          this.opts.logger.error({ controller: name, err: (err as Error).message }, 'leader election: failed to start leading; releasing');
          await this.release(name);
        }
      }
    } catch (err) {
      this.opts.logger.warn({ err: (err as Error).message }, 'leader election: connection failed');
      await this.dropConnection();
    }
  }

  private async connect(): Promise<pg.Client> {
    // The URL's host list is searched for the host its target_session_attrs asks for (the primary, after a failover).
    const client = await connectSession(this.opts.connectionString, {
      keepAlive: true,
      application_name: 'plinth-leader-election',
      connectionTimeoutMillis: 5000,
      query_timeout: Math.min(5000, this.timing.renewDeadlineMs / 2),
    });
    client.on('error', () => {
      // Surfaces on the next query of tick(), which drops the connection.
    });
    try {
      // A leader silent for the lease duration loses its session, and with it its locks.
      await client.query(`SET idle_session_timeout = ${Math.round(this.timing.leaseDurationMs)}`);
    } catch (err) {
      await client.end().catch(() => undefined);
      throw err;
    }
    this.client = client;
    return client;
  }

  /** Gives up leading one name (its lock unlocked, for another process to take), keeping the others. */
  async resign(name: string): Promise<void> {
    await this.release(name);
  }

  private async release(name: string): Promise<void> {
    await this.stopLeading(name);
    const key = this.names.get(name);
    if (key && this.client) await this.client.query('SELECT pg_advisory_unlock($1::bigint)', [key]).catch(() => this.dropConnection());
  }

  /** Closes the connection (which releases every lock) and stops leading everything. */
  private async dropConnection(): Promise<void> {
    const c = this.client;
    this.client = undefined;
    // Stop the work first: the locks are released only once nothing here acts as leader.
    for (const name of [...this.leading]) await this.stopLeading(name);
    if (c) await c.end().catch(() => undefined);
  }

  private async stopLeading(name: string): Promise<void> {
    if (!this.leading.delete(name)) return;
    this.opts.logger.info({ controller: name }, 'leader election: stopped leading');
    try {
      await this.opts.onStoppedLeading(name);
    } catch (err) {
      this.opts.logger.error({ controller: name, err: (err as Error).message }, 'leader election: failed to stop cleanly');
    }
  }
}
