import type { FastifyReply } from 'fastify';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { ChangeLogRepository, Database, ObjectListRepository } from '@plinth/storage';
import { WatchCache, WatchPipeline } from '@plinth/storage';
import type { AppConfig } from '../config/app-config.js';
import { ApiError } from '@plinth/apimachinery';
import type { ResourceDefinition } from '../registry/resource-definition.js';
import { bookmarkBytes, type WatchFormat } from './watch-encoder.js';
import { effectiveReplicaLimit, WatchLimiter } from './watch-limits.js';
import { WatchMetrics } from './watch-metrics.js';
import { type InitialStateQuery, runWatch, type WatchPlan } from './watch-start.js';
import { type WatchFilter, WatchStream, type WatchStreamOwner } from './watch-stream.js';
import { watchDeadline } from './watch-deadline.js';

/** Everything the watch handler resolved for one watch request. */
export interface WatchRequest {
  def: ResourceDefinition;
  tenant: string;
  /** The requesting user's name, for the per-user watch limit. */
  user: string;
  filter: WatchFilter;
  format: WatchFormat;
  plan: WatchPlan;
  query: InitialStateQuery;
  allowBookmarks: boolean;
  /** The client's timeoutSeconds; undefined or 0 means the server's maximum (with jitter). */
  timeoutSeconds: number | undefined;
  warnings: string[];
}

/** What the watch service is built from. */
export interface WatchServiceDeps {
  config: AppConfig;
  logger: Logger;
  registry: Registry;
  db: Database;
  changes: ChangeLogRepository;
  lists: ObjectListRepository;
  databaseUrl: string;
}

const TICK_MS = 250;

/**
 * Serves watches on one replica: owns the watch pipeline (relay, cache,
 * Redis fan-out, compaction), the open streams, and one ticker for every
 * stream's periodic BOOKMARK and timeout (no timer per watcher).
 */
export class WatchService implements WatchStreamOwner {
  readonly pipeline: WatchPipeline;
  readonly maxBufferBytes: number;
  private readonly streams = new Set<WatchStream>();
  /** Tenant and user of each open stream, for the limiter. */
  private readonly owners = new Map<WatchStream, [string, string]>();
  private readonly limiter: WatchLimiter;
  private readonly metrics: WatchMetrics;
  private readonly logger: Logger;
  private ticker: NodeJS.Timeout | undefined;
  private accepting = false;
  /** Events written to watchers, read by the metric when scraped (no metric update per write). */
  private eventsSent = 0;

  constructor(private readonly deps: WatchServiceDeps) {
    const { config } = deps;
    this.logger = deps.logger;
    this.maxBufferBytes = config.watchBufferBytes;
    this.limiter = new WatchLimiter({
      perReplica: effectiveReplicaLimit(config.maxWatches),
      perTenant: config.maxWatchesPerTenant,
      perUser: config.maxWatchesPerUser,
    });
    this.pipeline = new WatchPipeline({
      databaseUrl: deps.databaseUrl,
      db: deps.db,
      changes: deps.changes,
      currentRevision: () => deps.lists.currentRevision(),
      cacheSize: config.watchCacheSize,
      pollIntervalMs: config.watchPollIntervalMs,
      retentionSeconds: config.historyRetentionSeconds,
      redisUrl: config.redisUrl,
      logger: deps.logger,
      onFanOut: (t) => this.metrics.fannedOut(t),
    });
    const p = this.pipeline;
    this.metrics = new WatchMetrics(deps.registry, {
      watchers: () => this.streams.size,
      cacheRevision: () => p.cache.revision,
      cacheOldestResumable: () => p.cache.oldestResumable,
      cacheLength: () => p.cache.length,
      isRelay: () => p.isRelay,
      compactionLagSeconds: () => p.compaction.stats.lagSeconds,
      compactedRevision: () => p.compaction.stats.compactedRevision,
      compactedTotal: () => p.compaction.stats.deletedTotal,
      backfilled: () => p.counters.backfilled,
      streamed: () => p.counters.streamed,
      pipelineErrors: () => p.counters.errors,
      degraded: () => (p.degradations().length > 0 ? 1 : 0),
      eventsSent: () => this.eventsSent,
    });
  }

  /** The replica's watch cache. */
  get cache(): WatchCache {
    return this.pipeline.cache;
  }

  /** Open watches on this replica. */
  get watcherCount(): number {
    return this.streams.size;
  }

  /** Starts the pipeline and the ticker; watches are served from then on. */
  async start(): Promise<void> {
    await this.pipeline.start();
    this.ticker = setInterval(() => this.tick(), TICK_MS);
    this.ticker.unref();
    this.accepting = true;
    this.logger.info({ mode: this.pipeline.mode, cacheSize: this.cache.capacity, revision: this.cache.revision }, 'watch pipeline started');
  }

  /** Ends every watch cleanly (clients re-watch elsewhere), then stops the pipeline. */
  async stop(): Promise<void> {
    this.accepting = false;
    clearInterval(this.ticker);
    for (const s of [...this.streams]) s.close('server shutting down');
    await this.pipeline.stop();
  }

  /** Problems of the watch path for /readyz; empty when healthy. */
  async readiness(): Promise<string[]> {
    if (!this.accepting) return ['the watch pipeline is not running'];
    return this.pipeline.problems();
  }

  /** What is impaired while watches are still served correctly (Redis down): for /readyz?verbose, never fatal. */
  degradations(): string[] {
    return this.accepting ? this.pipeline.degradations() : [];
  }

  /**
   * Answers a watch: 200 with a chunked stream right away, then the events
   * of the plan. Returns at once; the stream lives on until it times out,
   * the client leaves, it falls too far behind, or the server stops.
   */
  serve(reply: FastifyReply, w: WatchRequest): void {
    if (!this.accepting) throw ApiError.serviceUnavailable('the server is shutting down');
    this.limiter.acquire(w.tenant, w.user);
    reply.hijack();
    const res = reply.raw;
    const headers: Record<string, string | string[]> = {
      'Content-Type': w.format.contentType,
      'Cache-Control': 'no-cache, private',
    };
    // HTTP/2 streams are framed by the protocol (and forbid the header); HTTP/1.1 streams are chunked.
    if (reply.request.raw.httpVersionMajor < 2) {
      headers['Transfer-Encoding'] = 'chunked';
      // No Nagle delay: an event must not wait for the client to acknowledge the one before it. HTTP/2
      // sessions set this themselves, but the HTTP/1.1 fallback of Node's HTTP/2 server leaves it off
      // (unlike Node's HTTP/1 server, and Go's, whose connections are all TCP_NODELAY).
      res.socket?.setNoDelay(true);
    }
    if (w.warnings.length > 0) headers.Warning = [...new Set(w.warnings)].map((t) => `299 - ${JSON.stringify(t.replace(/[\r\n]+/g, ' '))}`);
    res.writeHead(200, headers);
    res.flushHeaders();
    // A watch holds its tenant's request seat only while it starts.
    reply.request.releaseSeat?.();
    reply.request.auditResponseStarted?.();
    const now = Date.now();
    const maxMs = this.deps.config.maxWatchSeconds * 1000;
    const deadline = watchDeadline(now, w.timeoutSeconds, maxMs);
    const bookmarkMs = this.deps.config.bookmarkIntervalSeconds * 1000;
    const nextBookmark = w.allowBookmarks ? now + bookmarkMs * (0.75 + 0.25 * Math.random()) : 0;
    const stream = new WatchStream(this, res, WatchCache.bucketKey(w.tenant, w.def.storageResource), w.filter, w.format, deadline, nextBookmark);
    this.streams.add(stream);
    this.owners.set(stream, [w.tenant, w.user]);
    this.metrics.opened.inc();
    res.on('close', () => stream.close('client closed'));
    const subscribe = () => {
      if (stream.closed) return;
      stream.live = true;
      this.cache.subscribe(stream);
    };
    void runWatch(stream, w.plan, w.query, { lists: this.deps.lists, changes: this.deps.changes, cache: this.cache }, subscribe, (err) =>
      this.logger.error({ err: (err as Error)?.message ?? String(err) }, 'watch failed'),
    );
  }

  /** WatchStreamOwner: forget the stream; count evictions. */
  streamClosed(stream: WatchStream, reason: string): void {
    this.streams.delete(stream);
    const owner = this.owners.get(stream);
    if (owner) {
      this.owners.delete(stream);
      this.limiter.release(owner[0], owner[1]);
    }
    if (reason === 'slow') {
      this.metrics.slowClosed.inc();
      this.logger.info({ bucket: stream.bucket.replace('\u0000', '/'), from: stream.from }, 'watch closed: client too slow');
    }
  }

  /** WatchStreamOwner: count events. */
  eventsWritten(n: number): void {
    this.eventsSent += n;
  }

  /** WatchStreamOwner: stop the live feed of a stream. */
  unsubscribe(stream: WatchStream): void {
    this.cache.unsubscribe(stream);
  }

  /** Ends streams past their deadline and sends due BOOKMARKs (bytes shared per format and revision). */
  private tick(): void {
    const now = Date.now();
    const bookmarkMs = this.deps.config.bookmarkIntervalSeconds * 1000;
    const shared = new Map<string, Buffer>();
    for (const s of this.streams) {
      if (now >= s.deadline) {
        s.close('timeout');
        continue;
      }
      if (s.nextBookmark === 0 || !s.live || now < s.nextBookmark) continue;
      const rv = Math.max(s.from, this.cache.revision);
      s.nextBookmark = now + bookmarkMs;
      s.sendBookmark(rv, false, (cols) => {
        const key = `${s.format.key}|${s.format.def.kind}|${rv}|${cols ? 1 : 0}`;
        let b = shared.get(key);
        if (!b) shared.set(key, (b = bookmarkBytes(s.format, rv, false, cols)));
        return b;
      });
    }
  }
}
