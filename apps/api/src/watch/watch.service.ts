import type { FastifyReply } from 'fastify';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { type ChangeLogRepository, ChangeLogRepository as ShardChangeLog, type Database, DEFAULT_SHARD, ObjectListRepository as ShardLists, type ShardHandle, type Storage, WatchCache, WatchPipeline, type WatchPipelineOptions } from '@plinth/storage';
import type { AppConfig } from '../config/app-config.js';
import { ApiError } from '@plinth/apimachinery';
import type { ResourceDefinition } from '../registry/resource-definition.js';
import { bookmarkBytes, type WatchFormat } from './watch-encoder.js';
import { effectiveReplicaLimit, WatchLimiter } from './watch-limits.js';
import { WatchMetrics } from './watch-metrics.js';
import { type InitialStateQuery, runWatch, type WatchPlan, type WatchStartDeps } from './watch-start.js';
import { type WatchFilter, WatchStream, type WatchStreamOwner } from './watch-stream.js';
import { ShardedChangeSource } from './sharded-change-source.js';
import { watchDeadline } from './watch-deadline.js';

/** Everything the watch handler resolved for one watch request. */
export interface WatchRequest {
  def: ResourceDefinition;
  tenant: string;
  /** The shard the tenant lives on (its changes come from that shard's cache). */
  shard: string;
  /** The requesting user's name, for the per-user watch limit. */
  user: string;
  filter: WatchFilter;
  format: WatchFormat;
  plan: WatchPlan;
  query: InitialStateQuery;
  allowBookmarks: boolean;
  /** The client's timeoutSeconds; undefined or 0 means the server's maximum (with jitter). */
  timeoutSeconds: number | undefined;
  /** The revision from which the shard's cache holds the tenant's changes (a moved tenant's); older starts read the change log. */
  arrivedRevision?: number;
  warnings: string[];
}

/** The shards whose change feeds the watch service follows (the ShardPool). */
export interface WatchShards {
  /** The platform's own database, the default shard. */
  platform: { db: Database; url: string };
  /** The shard `tenant` lives on, without a read when known. */
  shardOf(tenant: string): string;
  /** The shard, and the revision from which its changes are live there (0 unless it moved there). */
  placementOf(tenant: string): { shard: string; since: number };
  /** Calls back when a shard is added or removed, or starts or stops answering; returns the unsubscribe function. */
  listen(l: {
    added?(shard: ShardHandle & { url: string }): void | Promise<void>;
    removed?(name: string): void | Promise<void>;
    readinessChanged?(name: string, ready: boolean): void;
    historyChanged?(name: string): void | Promise<void>;
  }): () => void;
}

/** What the watch service is built from. */
export interface WatchServiceDeps {
  config: AppConfig;
  logger: Logger;
  registry: Registry;
  /** Routed by tenant: a watch's catch-up reads its tenant's shard. */
  changes: ChangeLogRepository;
  lists: Storage;
  shards: WatchShards;
  /** Catch-up batches from a read replica that has replayed them (StandbyReadRouter); the primary otherwise. */
  standby?: WatchStartDeps['standby'];
  /** Told of each change handed to watchers (its trace span); unset when tracing is off. */
  onDispatch?: WatchPipelineOptions['onDispatch'];
}

const TICK_MS = 250;

/**
 * Serves watches on one replica: owns a watch pipeline per shard (relay,
 * cache, Redis fan-out, compaction: each shard's changes carry that
 * shard's revisions), the open streams, and one ticker for every stream's
 * periodic BOOKMARK and timeout (no timer per watcher).
 */
export class WatchService implements WatchStreamOwner {
  /** The default shard's pipeline (the platform's own database). */
  readonly pipeline: WatchPipeline;
  readonly maxBufferBytes: number;
  /** Every shard's change stream, for the caches of other concerns. */
  readonly changeSource: ShardedChangeSource;
  private readonly pipelines = new Map<string, WatchPipeline>();
  private readonly streams = new Set<WatchStream>();
  /** Tenant, user and shard of each open stream, for the limiter and the stream's cache. */
  private readonly owners = new Map<WatchStream, [string, string, string]>();
  private stopListening: (() => void) | undefined;
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
    this.changeSource = new ShardedChangeSource((tenant) => deps.shards.shardOf(tenant));
    this.pipeline = this.newPipeline(deps.shards.platform.db, deps.shards.platform.url);
    this.pipelines.set(DEFAULT_SHARD, this.pipeline);
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

  /** One shard's pipeline over its own database: its relay, cache and compaction. */
  private newPipeline(db: Database, url: string): WatchPipeline {
    const { config } = this.deps;
    const lists = new ShardLists(db);
    return new WatchPipeline({
      databaseUrl: url,
      db,
      changes: new ShardChangeLog(db),
      currentRevision: () => lists.currentRevision(),
      cacheSize: config.watchCacheSize,
      pollIntervalMs: config.watchPollIntervalMs,
      retentionSeconds: config.historyRetentionSeconds,
      redisUrl: config.redisUrl,
      logger: this.deps.logger,
      onFanOut: (t) => this.metrics.fannedOut(t),
      onDispatch: this.deps.onDispatch,
    });
  }

  /** The change stream of every shard, for the caches of other concerns (observers and per-tenant subscribers). */
  get cache(): ShardedChangeSource {
    return this.changeSource;
  }

  /** Where `tenant` lives (as this replica's directory knows it): its shard, and the revision its changes are live there from. */
  placementOf(tenant: string): { shard: string; since: number } {
    return this.deps.shards.placementOf(tenant);
  }

  /** The watch cache of `tenant`'s shard, or undefined when this replica does not follow it (the shard is not connected). */
  cacheOf(tenant: string): WatchCache | undefined {
    return this.pipelines.get(this.deps.shards.shardOf(tenant))?.cache;
  }

  /** Every shard's pipeline, by shard name. */
  shardPipelines(): ReadonlyMap<string, WatchPipeline> {
    return this.pipelines;
  }

  /** Resolves once `tenant`'s shard's cache has applied `revision` (false after the pipeline's timeout). */
  waitApplied(tenant: string, revision: number): Promise<boolean> {
    const p = this.pipelines.get(this.deps.shards.shardOf(tenant));
    return p ? p.waitApplied(revision) : Promise.resolve(false);
  }

  /** Follows a shard that got connected: its own pipeline and cache. */
  private async addShard(shard: ShardHandle & { url: string }): Promise<void> {
    if (this.pipelines.has(shard.name)) return;
    const p = this.newPipeline(shard.db, shard.url);
    this.pipelines.set(shard.name, p);
    try {
      await this.startPipeline(shard.name, p);
    } catch (err) {
      this.logger.warn({ shard: shard.name, err: (err as Error).message }, 'watch pipeline of a shard did not start; retried when it answers');
      this.pipelines.delete(shard.name);
      return;
    }
    this.logger.info({ shard: shard.name, revision: p.cache.revision }, 'watch pipeline of a shard started');
  }

  /** Starts shard `name`'s pipeline (its change feed) and follows its cache in the change source: the one start-up of every shard's, the platform's included. */
  private async startPipeline(name: string, p: WatchPipeline): Promise<void> {
    await p.start();
    this.changeSource.add(name, p.cache);
  }

  /** Stops following a shard: its watches end (clients re-watch, and get 503 until it is back). */
  private async removeShard(name: string): Promise<void> {
    const p = this.pipelines.get(name);
    if (!p || name === DEFAULT_SHARD) return;
    this.pipelines.delete(name);
    this.changeSource.remove(name);
    this.endShard(name, `shard ${name} is gone`);
    await p.stop();
  }

  /** Ends every watch served from shard `name` (it stopped answering): clients re-watch later from where they were. */
  endShard(name: string, reason: string): void {
    for (const [stream, owner] of this.owners) if (owner[2] === name) stream.close(reason);
  }

  /** Ends every watch of `tenant` served from a shard it no longer lives on (a move switched it): clients re-watch there. */
  endMovedTenant(tenant: string, reason: string): void {
    const home = this.deps.shards.shardOf(tenant);
    for (const [stream, owner] of this.owners) if (owner[0] === tenant && owner[2] !== home) stream.close(reason);
    this.changeSource.endTenant(tenant, reason);
  }

  /**
   * Ends every watch of `tenant` and every per-tenant state the change
   * stream feeds on this replica ({@link ShardedChangeSource.retireTenant}):
   * the tenant was deleted, and a new tenant of its name must start from nothing.
   */
  retireTenant(tenant: string, reason: string): void {
    for (const [stream, owner] of this.owners) if (owner[0] === tenant) stream.close(reason);
    this.changeSource.retireTenant(tenant, reason);
  }

  /** Open watches on this replica. */
  get watcherCount(): number {
    return this.streams.size;
  }

  /** Starts the pipeline and the ticker; watches are served from then on. */
  async start(): Promise<void> {
    await this.startPipeline(DEFAULT_SHARD, this.pipeline);
    this.stopListening = this.deps.shards.listen({
      added: (shard) => this.addShard(shard),
      removed: (name) => this.removeShard(name),
      // A tenant shard that stops answering ends its watches (clients resume once it is back); the platform's own
      // shard keeps them: its pipeline rides out a restart as before, and nothing else could serve them anyway.
      readinessChanged: (name, ready) => {
        if (!ready && name !== DEFAULT_SHARD) this.endShard(name, `shard ${name} is unavailable`);
      },
      // A failover lost revisions this replica's cache (and its watchers) saw: restart the cache at the new history's
      // revision and end the shard's watches; those resuming from a lost revision get 410 Expired and relist.
      historyChanged: async (name) => {
        const p = this.pipelines.get(name);
        this.endShard(name, `shard ${name} failed over and lost revisions`);
        await p?.restartCache('the shard failed over and its history lost revisions');
      },
    });
    this.ticker = setInterval(() => this.tick(), TICK_MS);
    this.ticker.unref();
    this.accepting = true;
    this.logger.info({ mode: this.pipeline.mode, cacheSize: this.pipeline.cache.capacity, revision: this.pipeline.cache.revision }, 'watch pipeline started');
  }

  /** Ends every watch cleanly (clients re-watch elsewhere), then stops the pipeline. */
  async stop(): Promise<void> {
    this.accepting = false;
    clearInterval(this.ticker);
    this.stopListening?.();
    for (const s of [...this.streams]) s.close('server shutting down');
    for (const p of this.pipelines.values()) await p.stop();
  }

  /** Problems of the watch path of the platform's own shard, for /readyz; empty when healthy. Other shards' are {@link degradations}. */
  async readiness(): Promise<string[]> {
    if (!this.accepting) return ['the watch pipeline is not running'];
    return this.pipeline.problems();
  }

  /**
   * What is impaired while the replica still serves (Redis down, a shard's
   * feed failing): for /readyz?verbose, never fatal. Other shards' problems
   * name the shard.
   */
  async degradations(): Promise<string[]> {
    if (!this.accepting) return [];
    const out = [...this.pipeline.degradations()];
    for (const [name, p] of this.pipelines) {
      if (name === DEFAULT_SHARD) continue;
      for (const d of [...p.degradations(), ...(await p.problems())]) out.push(`shard ${name}: ${d}`);
    }
    return out;
  }

  /**
   * Answers a watch: 200 with a chunked stream right away, then the events
   * of the plan. Returns at once; the stream lives on until it times out,
   * the client leaves, it falls too far behind, or the server stops.
   */
  serve(reply: FastifyReply, w: WatchRequest): void {
    if (!this.accepting) throw ApiError.serviceUnavailable('the server is shutting down');
    const cache = this.pipelines.get(w.shard)?.cache;
    if (!cache) throw new ApiError(503, 'ServiceUnavailable', `shard "${w.shard}" of tenant "${w.tenant}" is not connected; retry the request`, { retryAfterSeconds: 1 }, { 'Retry-After': '1' });
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
    this.owners.set(stream, [w.tenant, w.user, w.shard]);
    this.metrics.opened.inc();
    res.on('close', () => stream.close('client closed'));
    const subscribe = () => {
      if (stream.closed) return;
      stream.live = true;
      cache.subscribe(stream);
    };
    void runWatch(stream, w.plan, w.query, { lists: this.deps.lists, changes: this.deps.changes, cache, logFrom: w.arrivedRevision, standby: this.deps.standby }, subscribe, (err) =>
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
    const shard = this.owners.get(stream)?.[2];
    if (shard !== undefined) this.pipelines.get(shard)?.cache.unsubscribe(stream);
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
      const rv = Math.max(s.from, this.pipelines.get(this.owners.get(s)?.[2] ?? DEFAULT_SHARD)?.cache.revision ?? 0);
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
