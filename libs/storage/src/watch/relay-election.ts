import pg from 'pg';
import type { PipelineLogger } from './pipeline-logger.js';

/** The advisory lock key of the watch relay ("plinth relay"). */
export const RELAY_LOCK_KEY = '7018801503621644281';

/** Options of {@link RelayElection}. */
export interface RelayElectionOptions {
  connectionString: string;
  logger: PipelineLogger;
  /** Called when this process becomes the relay. */
  onElected: () => Promise<void>;
  /** Called when it stops being the relay (connection lost, or stop()). */
  onDeposed: () => Promise<void>;
  /** How often a standby tries the lock and the leader checks its connection. */
  intervalMs?: number;
  lockKey?: string;
}

/**
 * Elects one relay per database with a session-level PostgreSQL advisory
 * lock held on a dedicated connection. If the relay process dies, its
 * connection drops and PostgreSQL releases the lock, so a standby's next
 * attempt (every `intervalMs`) takes over. The leader checks its own
 * connection at the same interval and steps down as soon as it fails: it
 * can no longer be sure it holds the lock. Two relays overlapping for an
 * instant is harmless (the stream refuses repeated revisions).
 */
export class RelayElection {
  private client: pg.Client | undefined;
  private leader = false;
  private stopped = true;
  private timer: NodeJS.Timeout | undefined;
  private ticking: Promise<void> = Promise.resolve();

  constructor(private readonly opts: RelayElectionOptions) {}

  /** True while this process holds the lock and runs the relay. */
  get isLeader(): boolean {
    return this.leader;
  }

  /** True while the election connection is up. */
  get connected(): boolean {
    return this.client !== undefined;
  }

  /** Tries for the lock now and then every interval. */
  async start(): Promise<void> {
    if (!this.stopped) return;
    this.stopped = false;
    await this.tick();
    this.timer = setInterval(() => {
      this.ticking = this.ticking.then(() => this.tick());
    }, this.opts.intervalMs ?? 1000);
    this.timer.unref();
  }

  /** Steps down (releasing the lock) and closes the connection. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.ticking;
    if (this.leader) await this.depose();
    const c = this.client;
    this.client = undefined;
    if (c) await c.end().catch(() => undefined);
  }

  private async tick(): Promise<void> {
    if (this.stopped) return;
    try {
      const client = this.client ?? (await this.connect());
      if (this.leader) {
        await client.query('SELECT 1');
        return;
      }
      const { rows } = await client.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1::bigint) AS locked', [this.opts.lockKey ?? RELAY_LOCK_KEY]);
      if (rows[0]?.locked && !this.stopped) {
        this.leader = true;
        this.opts.logger.info({}, 'watch relay: elected');
        try {
          await this.opts.onElected();
        } catch (err) {
          this.opts.logger.error({ err: (err as Error).message }, 'watch relay: failed to start; stepping down');
          await this.dropConnection();
        }
      }
    } catch (err) {
      this.opts.logger.warn({ err: (err as Error).message }, 'watch relay election: connection failed');
      await this.dropConnection();
    }
  }

  private async connect(): Promise<pg.Client> {
    const client = new pg.Client({
      connectionString: this.opts.connectionString,
      keepAlive: true,
      application_name: 'plinth-relay-election',
      connectionTimeoutMillis: 5000,
      query_timeout: 5000,
    });
    client.on('error', () => {
      // Surfaces on the next query of tick(), which drops the connection.
    });
    await client.connect();
    this.client = client;
    return client;
  }

  /** Closes the connection (which releases the lock) and steps down if leading. */
  private async dropConnection(): Promise<void> {
    const c = this.client;
    this.client = undefined;
    if (this.leader) await this.depose();
    if (c) await c.end().catch(() => undefined);
  }

  private async depose(): Promise<void> {
    this.leader = false;
    this.opts.logger.info({}, 'watch relay: stepping down');
    try {
      await this.opts.onDeposed();
    } catch (err) {
      this.opts.logger.error({ err: (err as Error).message }, 'watch relay: failed to stop cleanly');
    }
  }
}
