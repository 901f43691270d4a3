import type { Redis } from 'ioredis';
import type { ChangeEvent } from '../change-log.repository.js';
import type { ChangeSink } from './change-relay.js';
import { encodeChange, revisionOfStreamId, streamId } from './redis-change-codec.js';

/** Redis' answer to an XADD whose id is not above the stream's last id. */
const ALREADY_PUBLISHED = /equal or smaller than the target stream top item/i;

/**
 * Publishes changes to a Redis Stream with the revision as the entry id.
 * Redis refuses an id at or below the stream's last one, so a change
 * published twice (two relays overlapping for a moment during a failover)
 * is stored once and the stream stays in revision order. The stream is
 * trimmed to about `maxLen` entries; replicas that fall further behind
 * read the change log instead.
 */
export class RedisChangePublisher implements ChangeSink {
  constructor(
    private readonly redis: Redis,
    readonly streamKey: string,
    private readonly maxLen: number,
  ) {}

  /** The revision of the last entry ever added (even if trimmed since), or undefined when the stream does not exist. */
  async lastPublished(): Promise<number | undefined> {
    try {
      const info = (await this.redis.call('XINFO', 'STREAM', this.streamKey)) as unknown[];
      for (let i = 0; i + 1 < info.length; i += 2) {
        if (String(info[i]) === 'last-generated-id') return revisionOfStreamId(String(info[i + 1]));
      }
      return undefined;
    } catch (err) {
      if (/no such key/i.test((err as Error).message)) return undefined;
      throw err;
    }
  }

  /** Deletes the stream (used when it belongs to an older incarnation of the database). */
  async drop(): Promise<void> {
    await this.redis.del(this.streamKey);
  }

  /** Adds each change, in order, in one round trip. Already-published revisions are skipped. */
  async publish(changes: ChangeEvent[]): Promise<void> {
    const pipe = this.redis.pipeline();
    for (const c of changes) {
      pipe.call('XADD', this.streamKey, 'MAXLEN', '~', String(this.maxLen), streamId(c.revision), 'c', encodeChange(c));
    }
    const results = (await pipe.exec()) ?? [];
    for (const [err] of results) {
      if (err && !ALREADY_PUBLISHED.test(err.message)) throw err;
    }
  }
}
