import type { ChangeFeed, ChangeFeedDeps } from './change-feed.js';
import { ListenedRelay } from './listened-relay.js';

/**
 * Single-node feed: NOTIFY wakes the relay, which reads the change log in
 * revision order straight into the watch cache; the relay's poll covers a
 * missed NOTIFY or a LISTEN connection being down.
 */
export class LocalChangeFeed implements ChangeFeed {
  private relay: ListenedRelay | undefined;

  constructor(private readonly deps: ChangeFeedDeps) {}

  /** Always true: a single node is its own relay. */
  get isRelay(): boolean {
    return true;
  }

  /** Starts the relay and the LISTEN connection. */
  async start(): Promise<void> {
    const { cache, feeder } = this.deps;
    this.relay = await ListenedRelay.start(this.deps, { publish: (changes) => feeder.applyLog(changes) }, cache.revision, (_from, to) =>
      cache.reset(to, 'watch cache fell behind the kept history'),
    );
  }

  /** Stops both. */
  async stop(): Promise<void> {
    await this.relay?.stop();
  }

  /** Nothing degrades in single-node mode: a lost LISTEN is made up by the poll, and reported as a problem. */
  degradations(): string[] {
    return [];
  }

  /** LISTEN down or the relay failing. */
  problems(): string[] {
    const out: string[] = [];
    if (this.relay && !this.relay.listening) out.push('the PostgreSQL LISTEN connection is down');
    if (this.relay && !this.relay.healthy) out.push('reading the change log fails');
    return out;
  }
}
