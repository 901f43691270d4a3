import { ChangeListener } from './change-listener.js';
import { ChangeRelay, type ChangeSink } from './change-relay.js';
import type { ChangeFeedDeps } from './change-feed.js';

/**
 * A relay of the change log into `sink` woken by LISTEN, as both feeds run
 * it (the single node into its cache, the elected relay of a cluster into
 * the Redis stream): started and stopped together, and reporting their
 * problems together.
 */
export class ListenedRelay {
  private constructor(
    private readonly relay: ChangeRelay,
    private readonly listener: ChangeListener,
  ) {}

  /**
   * Starts a relay publishing the changes after `from` to `sink`, then the
   * LISTEN connection whose NOTIFYs wake it (the relay's poll covers a
   * missed NOTIFY or LISTEN being down). `onSkip`: the relay's position was
   * compacted away and it jumped ahead.
   */
  static async start(deps: ChangeFeedDeps, sink: ChangeSink, from: number, onSkip?: (from: number, to: number) => void): Promise<ListenedRelay> {
    const relay = new ChangeRelay({
      changes: deps.changes,
      sink,
      from,
      pollIntervalMs: deps.pollIntervalMs,
      currentRevision: deps.currentRevision,
      logger: deps.logger,
      onSkip,
      onError: deps.onError,
    });
    const listener = new ChangeListener({
      connectionString: deps.databaseUrl,
      logger: deps.logger,
      onWake: (rev) => {
        if (rev !== undefined) deps.onNotify?.(rev);
        relay.wake(rev);
      },
    });
    const running = new ListenedRelay(relay, listener);
    relay.start();
    try {
      await listener.start();
    } catch (err) {
      await relay.stop();
      throw err;
    }
    return running;
  }

  /** True while the LISTEN connection is up. */
  get listening(): boolean {
    return this.listener.connected;
  }

  /** False after the relay's read or publish failed, until one succeeds. */
  get healthy(): boolean {
    return this.relay.healthy;
  }

  /** Stops LISTEN, then the relay. */
  async stop(): Promise<void> {
    await this.listener.stop();
    await this.relay.stop();
  }
}
