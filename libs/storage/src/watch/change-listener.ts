import type pg from 'pg';
import { connectSession } from '../host-list-connector.js';
import type { PipelineLogger } from './pipeline-logger.js';

/** The channel every write NOTIFYs with its revision (see the initial migration). */
export const CHANGES_CHANNEL = 'plinth_changes';

/** Options of {@link ChangeListener}. */
export interface ChangeListenerOptions {
  connectionString: string;
  /** Called for each NOTIFY with the notified revision, and with no argument after every (re)connect. */
  onWake: (revision?: number) => void;
  logger: PipelineLogger;
  minBackoffMs?: number;
  maxBackoffMs?: number;
}

/**
 * LISTENs for the write NOTIFYs on a dedicated connection (never a pool
 * client: a pooled LISTEN would be lost when the pool recycles it). A NOTIFY
 * is only a wake-up; the reader still reads the change log, so a missed
 * NOTIFY costs latency, never an event. On any connection error it
 * reconnects with exponential backoff and wakes the reader once connected,
 * to cover what was committed meanwhile.
 */
export class ChangeListener {
  private client: pg.Client | undefined;
  private stopped = false;
  private retryTimer: NodeJS.Timeout | undefined;
  private backoffMs: number;
  private connectedFlag = false;

  constructor(private readonly opts: ChangeListenerOptions) {
    this.backoffMs = opts.minBackoffMs ?? 100;
  }

  /** True while the LISTEN connection is up. */
  get connected(): boolean {
    return this.connectedFlag;
  }

  /** Connects and LISTENs. Resolves after the first attempt, successful or not (failures retry in the background). */
  async start(): Promise<void> {
    this.stopped = false;
    await this.connect();
  }

  /** Closes the connection and stops reconnecting. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    const c = this.client;
    this.client = undefined;
    this.connectedFlag = false;
    if (c) await c.end().catch(() => undefined);
  }

  private async connect(): Promise<void> {
    if (this.stopped) return;
    let client: pg.Client;
    try {
      // On the host the URL's target_session_attrs asks for: NOTIFYs are sent on the primary only.
      client = await connectSession(this.opts.connectionString, { keepAlive: true, application_name: 'plinth-watch-listener', connectionTimeoutMillis: 5000 });
    } catch (err) {
      this.retryLater(err as Error);
      return;
    }
    if (this.stopped) {
      await client.end().catch(() => undefined);
      return;
    }
    this.client = client;
    const lost = (err?: Error) => this.lost(client, err);
    client.on('error', lost);
    client.on('end', () => lost());
    client.on('notification', (msg) => {
      const revision = Number(msg.payload);
      this.opts.onWake(Number.isFinite(revision) ? revision : undefined);
    });
    try {
      await client.query(`LISTEN ${CHANGES_CHANNEL}`);
      if (this.client !== client) return;
      this.connectedFlag = true;
      this.backoffMs = this.opts.minBackoffMs ?? 100;
      this.opts.logger.debug?.({}, 'watch: LISTEN connection up');
      this.opts.onWake();
    } catch (err) {
      lost(err as Error);
    }
  }

  private lost(client: pg.Client, err?: Error): void {
    if (this.client !== client) return;
    this.client = undefined;
    this.connectedFlag = false;
    client.end().catch(() => undefined);
    this.retryLater(err);
  }

  private retryLater(err?: Error): void {
    if (this.stopped) return;
    this.opts.logger.warn({ err: err?.message }, 'watch: LISTEN connection lost; reconnecting');
    const delay = this.backoffMs;
    this.backoffMs = Math.min(this.backoffMs * 2, this.opts.maxBackoffMs ?? 1000);
    this.retryTimer = setTimeout(() => void this.connect(), delay);
    this.retryTimer.unref();
  }
}
