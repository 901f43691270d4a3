import { ChangeListener } from './change-listener.js';
import { ChangeRelay } from './change-relay.js';
import type { ChangeFeed, ChangeFeedDeps } from './change-feed.js';

/**
 * Single-node feed: NOTIFY wakes the relay, which reads the change log in
 * revision order straight into the watch cache; the relay's poll covers a
 * missed NOTIFY or a LISTEN connection being down.
 */
export class LocalChangeFeed implements ChangeFeed {
  private relay: ChangeRelay | undefined;
  private listener: ChangeListener | undefined;

  constructor(private readonly deps: ChangeFeedDeps) {}

  /** Always true: a single node is its own relay. */
  get isRelay(): boolean {
    return true;
  }

  /** Starts the relay and the LISTEN connection. */
  async start(): Promise<void> {
    const { cache, feeder, logger } = this.deps;
    const relay = new ChangeRelay({
      changes: this.deps.changes,
      sink: { publish: (changes) => feeder.applyLog(changes) },
      from: cache.revision,
      pollIntervalMs: this.deps.pollIntervalMs,
      currentRevision: this.deps.currentRevision,
      logger,
      onSkip: (_from, to) => cache.reset(to, 'watch cache fell behind the kept history'),
      onError: this.deps.onError,
    });
    this.relay = relay;
    this.listener = new ChangeListener({ connectionString: this.deps.databaseUrl, logger, onWake: (rev) => {
        if (rev !== undefined) this.deps.onNotify?.(rev);
        relay.wake(rev);
      },
    });
    relay.start();
    await this.listener.start();
  }

  /** Stops both. */
  async stop(): Promise<void> {
    await this.listener?.stop();
    await this.relay?.stop();
  }

  /** Nothing degrades in single-node mode: a lost LISTEN is made up by the poll, and reported as a problem. */
  degradations(): string[] {
    return [];
  }

  /** LISTEN down or the relay failing. */
  problems(): string[] {
    const out: string[] = [];
    if (this.listener && !this.listener.connected) out.push('the PostgreSQL LISTEN connection is down');
    if (this.relay && !this.relay.healthy) out.push('reading the change log fails');
    return out;
  }
}
