import type { Redis } from 'ioredis';
import type { ChangeEvent } from '../change-log.repository.js';
import type { CacheFeeder } from './cache-feeder.js';
import type { PipelineLogger } from './pipeline-logger.js';
import { decodeChange, streamId } from './redis-change-codec.js';
import type { WatchCache } from './watch-cache.js';

/** Options of {@link RedisChangeConsumer}. */
export interface RedisChangeConsumerOptions {
  /** A connection of its own: XREAD BLOCK holds it. */
  redis: Redis;
  streamKey: string;
  cache: WatchCache;
  feeder: CacheFeeder;
  logger: PipelineLogger;
  blockMs?: number;
  onError?: (err: unknown) => void;
  /** Called with the number of changes each stream read delivered. */
  onStreamed?: (count: number) => void;
}

/**
 * Reads the change stream into the replica's watch cache. It always asks
 * for the entries after the cache's own revision, so after a fill from
 * PostgreSQL, a Redis restart or a trim it resumes at the right place; the
 * feeder drops repeats and fills holes.
 */
export class RedisChangeConsumer {
  private stopped = true;
  private loopDone: Promise<void> = Promise.resolve();
  private failed = false;
  private lastDelivery = 0;

  constructor(private readonly opts: RedisChangeConsumerOptions) {}

  /** True while connected and the last XREAD did not fail. */
  get healthy(): boolean {
    return this.opts.redis.status === 'ready' && !this.failed;
  }

  /** When the stream last delivered something (ms since the epoch; 0 never). */
  get lastDeliveryAt(): number {
    return this.lastDelivery;
  }

  /** Starts the read loop. */
  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.loopDone = this.loop();
  }

  /** Stops the loop and closes the connection. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.opts.redis.disconnect();
    await this.loopDone;
  }

  private async loop(): Promise<void> {
    const { redis, streamKey, cache, feeder } = this.opts;
    const block = String(this.opts.blockMs ?? 2000);
    while (!this.stopped) {
      try {
        if (redis.status !== 'ready') {
          await sleep(100);
          continue;
        }
        const reply = await redis.call('XREAD', 'COUNT', '1000', 'BLOCK', block, 'STREAMS', streamKey, streamId(cache.revision));
        this.failed = false;
        const entries = streamEntries(reply);
        if (entries.length === 0) continue;
        const changes: ChangeEvent[] = [];
        for (const [id, fields] of entries) {
          const at = fields.indexOf('c');
          if (at >= 0 && at + 1 < fields.length) changes.push(decodeChange(id, fields[at + 1]));
        }
        if (changes.length > 0) {
          this.lastDelivery = Date.now();
          this.opts.onStreamed?.(changes.length);
          await feeder.applyStream(changes);
        }
      } catch (err) {
        if (this.stopped) break;
        if (!this.failed) this.opts.logger.warn({ err: (err as Error).message }, 'watch: reading the change stream failed; retrying');
        this.failed = true;
        this.opts.onError?.(err);
        await sleep(200);
      }
    }
  }
}

type StreamEntry = [id: string, fields: string[]];

/**
 * The entries of an XREAD reply for one stream, whichever shape the
 * protocol gives: RESP2 `[[key, entries]]`, or RESP3's map flattened to
 * `[key, entries]`; null (timeout) gives none.
 */
function streamEntries(reply: unknown): StreamEntry[] {
  if (!Array.isArray(reply) || reply.length === 0) return [];
  if (typeof reply[0] === 'string' || Buffer.isBuffer(reply[0])) return (reply[1] ?? []) as StreamEntry[];
  return reply.flatMap((pair) => ((pair as [string, StreamEntry[]])[1] ?? []) as StreamEntry[]);
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms).unref());
}
