import type { Redis } from 'ioredis';
import type { ChangeFeed, ChangeFeedDeps } from './change-feed.js';
import { ListenedRelay } from './listened-relay.js';
import { RedisChangeConsumer } from './redis-change-consumer.js';
import { RedisChangePublisher } from './redis-change-publisher.js';
import { createRedisClient, waitReady } from './redis-connection.js';
import { AdvisoryLockElector } from '../advisory-lock-elector.js';

/** Options of {@link ClusterChangeFeed} beyond the common ones. */
export interface ClusterFeedOptions {
  redisUrl: string;
  streamKey: string;
  /** Approximate number of entries the stream keeps. */
  streamMaxLen: number;
  /** How often a standby tries for the relay and the relay confirms its session (default 1 s). */
  electionIntervalMs?: number;
}

/** The one election name of the watch relay (its lock key is namespaced by {@link RELAY_KEY_PREFIX}). */
const RELAY = 'relay';
const RELAY_KEY_PREFIX = 'plinth watch';

/**
 * Cluster feed. Every replica runs an election; the one holding the
 * advisory lock runs the relay (LISTEN + change log → Redis Stream). Every
 * replica, the relay included, consumes the stream into its cache. When
 * the stream has said nothing for a poll interval while PostgreSQL has
 * newer revisions (relay failover, Redis down), the replica reads the
 * change log itself, so watchers keep getting every change, only later.
 */
export class ClusterChangeFeed implements ChangeFeed {
  private election: AdvisoryLockElector | undefined;
  private consumer: RedisChangeConsumer | undefined;
  private consumerRedis: Redis | undefined;
  private publisherRedis: Redis | undefined;
  private relay: ListenedRelay | undefined;
  private stallTimer: NodeJS.Timeout | undefined;
  private checking = false;

  constructor(
    private readonly deps: ChangeFeedDeps,
    private readonly opts: ClusterFeedOptions,
  ) {}

  /** True while this replica holds the relay lock. */
  get isRelay(): boolean {
    return this.election?.isLeader(RELAY) ?? false;
  }

  /** Starts consuming, electing and the stall check. */
  async start(): Promise<void> {
    const { logger } = this.deps;
    this.consumerRedis = createRedisClient(this.opts.redisUrl, 'plinth-change-consumer', logger);
    this.publisherRedis = createRedisClient(this.opts.redisUrl, 'plinth-relay-publisher', logger);
    this.consumer = new RedisChangeConsumer({
      redis: this.consumerRedis,
      streamKey: this.opts.streamKey,
      cache: this.deps.cache,
      feeder: this.deps.feeder,
      logger,
      onError: this.deps.onError,
      onStreamed: this.deps.onStreamed,
    });
    this.consumer.start();
    // The controllers' elector, for one name: a relay that dies loses its lock with its connection; one that cannot
    // confirm its session within the renew deadline steps down. Two relays overlapping for an instant is harmless
    // (the stream refuses repeated revisions).
    const retryPeriodMs = this.opts.electionIntervalMs ?? 1000;
    this.election = new AdvisoryLockElector({
      connectionString: this.deps.databaseUrl,
      logger,
      keyPrefix: RELAY_KEY_PREFIX,
      timing: { retryPeriodMs, renewDeadlineMs: Math.max(5 * retryPeriodMs, 5000), leaseDurationMs: Math.max(8 * retryPeriodMs, 8000) },
      onStartedLeading: () => this.startRelay(),
      onStoppedLeading: () => this.stopRelay(),
    });
    this.election.add(RELAY);
    await this.election.start();
    this.stallTimer = setInterval(() => void this.checkStall(), this.deps.pollIntervalMs);
    this.stallTimer.unref();
  }

  /** Stops everything, stepping down as relay first. */
  async stop(): Promise<void> {
    clearInterval(this.stallTimer);
    await this.election?.stop();
    await this.consumer?.stop();
    this.publisherRedis?.disconnect();
  }

  /**
   * What stops this replica from serving watches correctly: the election
   * connection to PostgreSQL down, or (on the relay) LISTEN down or the
   * relay failing while Redis is up (then it is PostgreSQL that fails). A
   * Redis outage is not among them: the stall check reads the change log
   * itself, so watchers get every change, later (see degradations()).
   */
  problems(): string[] {
    const out: string[] = [];
    if (this.election && !this.election.connected) out.push('the relay election connection to PostgreSQL is down');
    if (this.isRelay) {
      if (this.relay && !this.relay.listening) out.push('the relay LISTEN connection is down');
      if (this.relay && !this.relay.healthy && this.redisHealthy) out.push('the relay cannot read the change log');
    }
    return out;
  }

  /** Redis unreachable: changes reach watchers through the PostgreSQL fallback, with more delay. */
  degradations(): string[] {
    return this.redisHealthy ? [] : ['Redis is unreachable: changes are read from PostgreSQL (slower fan-out)'];
  }

  private get redisHealthy(): boolean {
    return !this.consumer || this.consumer.healthy;
  }

  private async startRelay(): Promise<void> {
    const { logger } = this.deps;
    const publisher = new RedisChangePublisher(this.publisherRedis!, this.opts.streamKey, this.opts.streamMaxLen);
    const current = await this.deps.currentRevision();
    let from = current;
    if (await waitReady(this.publisherRedis!, 1000)) {
      try {
        const last = await publisher.lastPublished();
        if (last !== undefined && last > current) await publisher.drop();
        else if (last !== undefined) from = last;
      } catch (err) {
        logger.warn({ err: (err as Error).message }, 'watch relay: cannot read the stream position; starting at the newest revision');
      }
    }
    // Starting at `current` after a Redis loss leaves a hole the consumers fill from PostgreSQL.
    this.relay = await ListenedRelay.start(this.deps, publisher, from);
    logger.info({ from, stream: this.opts.streamKey }, 'watch relay: publishing');
  }

  private async stopRelay(): Promise<void> {
    const relay = this.relay;
    this.relay = undefined;
    await relay?.stop();
  }

  private async checkStall(): Promise<void> {
    if (this.checking || !this.consumer) return;
    if (Date.now() - this.consumer.lastDeliveryAt < this.deps.pollIntervalMs) return;
    this.checking = true;
    try {
      const current = await this.deps.currentRevision();
      if (current > this.deps.cache.revision) await this.deps.feeder.catchUp(current);
    } catch (err) {
      this.deps.onError?.(err);
    } finally {
      this.checking = false;
    }
  }
}
