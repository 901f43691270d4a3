import type { Logger } from 'pino';
import { checkSessionPooling, createDatabase, type Database, DEFAULT_SHARD, dropConnections, durableRevision, type FenceState, hostListConnector, migrateToLatest, probeDatabase, redisKeyPrefix, RevisionFence, type RevisionLeaseStore, rowSecurityOf, ServerProbe, setPoolSize, type ShardHandle, type ShardRouter, StorageError } from '@plinth/storage';
import { durabilityOf, type ShardDurability } from './shard-durability.js';
import { redactCredentials } from '../config/redact-credentials.js';
import { urlHost } from './connection-url.js';
import type { TenantDirectory } from './tenant-directory.js';
import { migrations } from '@plinth/migrations';

/** How often each shard is probed, and how long a probe may take before the shard counts as down (its sessions cut at once). */
export const SHARD_PROBE_INTERVAL_MS = 500;
const PROBE_TIMEOUT_MS = 1000;
/** How long the revision fence check (on the request pool, which may be busy) may take. */
const FENCE_TIMEOUT_MS = 2000;
/** Failed fence checks in a row after which a shard that served counts as down (a busy pool may miss one). */
const DOWN_AFTER = 2;
/** The fewest connections a shard's pool keeps, however many shards share the replica's bound. */
const MIN_POOL = 2;

/** One shard as this replica sees it. */
export interface ShardState {
  name: string;
  /** `host:port/database` of its URL, never the credentials. */
  host: string;
  /** Connected, migrated and answering its probe. */
  ready: boolean;
  /** Why it is not ready (names the host, never the password). */
  error?: string;
  /** Whether a write acknowledged now survives the loss of the primary, and why (from the last probe). */
  durability?: ShardDurability;
}

interface Entry extends ShardState {
  /** Its pool; undefined when it cannot even be connected (no Secret, no URL). */
  db?: Database;
  url: string;
  /** Owned by the pool (closed when the shard goes); false for the platform's own database. */
  owned: boolean;
  /** Its migrations have run. */
  migrated: boolean;
  /** The listeners were told it was added (its change feed runs). */
  announced: boolean;
  /** Failed probe rounds in a row. */
  failures?: number;
  /** Probes in a row that got no answer within PROBE_TIMEOUT_MS. */
  probeFailures?: number;
  /** Keeps the shard's revisions unique across failovers (checked with every probe). */
  fence?: RevisionFence;
  /** The timeline (and system identifier) this replica last served the shard on. */
  epoch?: string;
  /** Probes the server on a session of its own. */
  probe?: ServerProbe;
  /** What the last fence check found. */
  fenceState?: FenceState;
}

/** How the pool keeps revisions unique across failovers (see RevisionFence). */
export interface FenceSettings {
  /** Where revision ceilings are recorded (Redis in cluster mode); undefined: this replica's own highest revision is the bound. */
  leaseStore?: RevisionLeaseStore;
  /** How far ahead of the counter the ceiling is kept. */
  block: number;
}

/** What the pool tells the rest of the replica about. */
export interface ShardPoolListener {
  /** A shard got its pool (migrated and ready to serve). */
  added?(shard: ShardHandle & { url: string }): void | Promise<void>;
  /** A shard's pool is closing. */
  removed?(name: string): void | Promise<void>;
  /** A shard stopped or started answering. */
  readinessChanged?(name: string, ready: boolean): void;
  /**
   * A shard's primary changed and its history lacks revisions this replica
   * saw (a failover lost commits): what was derived from them (watch caches,
   * watches) must restart; watches from a lost revision are 410 Expired.
   */
  historyChanged?(name: string, state: FenceState): void | Promise<void>;
  /** A probe round of a shard ended: what its primary answered, or undefined when it did not (read replicas follow it). */
  primaryProbed?(name: string, state: FenceState | undefined): void;
  /** A shard's read replica URL was set, changed or removed (undefined), its Secret's `readReplicaKey`. */
  readReplica?(name: string, url: string | undefined): void | Promise<void>;
}

/**
 * The replica's connections to every shard, and the router the
 * repositories use ({@link ShardRouter}): a tenant's statements go to the
 * pool of the shard the directory names. Each shard is probed every
 * SHARD_PROBE_INTERVAL_MS; while one does not answer, its tenants are refused at once with
 * a StorageError `Unavailable` (503 with Retry-After) instead of waiting
 * for connection timeouts, and tenants of other shards are unaffected.
 * A shard counts as down, and its sessions are cut, as soon as one probe
 * (on a session of its own) gets no answer within PROBE_TIMEOUT_MS, or
 * after DOWN_AFTER failed fence checks in a row.
 * The pools share one replica-wide bound of connections (`totalConnections`):
 * each gets an equal part, at least MIN_POOL.
 */
export class ShardPool implements ShardRouter {
  private readonly entries = new Map<string, Entry>();
  private readonly listeners = new Set<ShardPoolListener>();
  private timer: NodeJS.Timeout | undefined;
  private probing = false;

  constructor(
    private readonly directory: TenantDirectory,
    platform: { db: Database; url: string },
    private readonly totalConnections: number,
    private readonly logger: Logger,
    private readonly fenceSettings: FenceSettings = { block: 1_000_000 },
  ) {
    const entry: Entry = { name: DEFAULT_SHARD, host: urlHost(platform.url), ready: true, db: platform.db, url: platform.url, owned: false, migrated: true, announced: true };
    entry.fence = this.fenceFor(entry);
    entry.probe = new ServerProbe(platform.url, PROBE_TIMEOUT_MS);
    this.entries.set(DEFAULT_SHARD, entry);
  }

  private seenHook: ((shard: string) => number) | undefined;
  /** The read replica URL of each shard that has one (not the platform's own: PLINTH_READ_REPLICA_URL). */
  private readonly readReplicaUrls = new Map<string, string>();

  /** Adds to what counts as a revision this replica has shown of a shard (the watch cache's revision). */
  onSeenRevision(hook: (shard: string) => number): void {
    this.seenHook = hook;
  }

  private fenceFor(e: Entry): RevisionFence {
    const db = e.db!;
    return new RevisionFence({
      db,
      leaseStore: this.fenceSettings.leaseStore,
      leaseKey: `${redisKeyPrefix(e.url)}:revision-ceiling`,
      block: this.fenceSettings.block,
      seen: () => Math.max(durableRevision(db), this.seenHook?.(e.name) ?? 0),
      onStoreError: (err) => this.logger.warn({ shard: e.name, err: err.message }, 'cannot extend the revision ceiling (Redis); writes go on up to the current one'),
    });
  }

  /** Starts probing every shard (a first round at once: a new primary is fenced before it serves writes). */
  start(): void {
    if (!this.timer) void this.probeAll();
    this.timer ??= setInterval(() => void this.probeAll(), SHARD_PROBE_INTERVAL_MS);
    this.timer.unref();
  }

  /** Stops probing and closes the pools of every shard but the platform's own. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    for (const name of [...this.entries.keys()]) if (name !== DEFAULT_SHARD) await this.remove(name);
    this.entries.get(DEFAULT_SHARD)?.probe?.close();
    await this.fenceSettings.leaseStore?.close?.();
  }

  /** Adds a listener; returns the function that removes it. */
  listen(l: ShardPoolListener): () => void {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  }

  /** Synchronous when the directory knows the tenant (every statement of a request asks): no promise on the hot path. */
  dbFor(tenant: string): Database | Promise<Database> {
    const known = this.directory.peek(tenant);
    if (known !== undefined) return this.dbOfShard(known, tenant);
    return this.directory.shardOf(tenant).then((shard) => this.dbOfShard(shard, tenant));
  }

  /** The pool of `shard`, or a StorageError Unavailable naming the shard (and `tenant`) when it cannot serve. */
  dbOfShard(shard: string, tenant?: string): Database {
    const e = this.entries.get(shard);
    const whose = tenant ? ` of tenant "${tenant}"` : '';
    if (e?.db && e.ready) return e.db;
    this.refusedHook?.(shard);
    throw new StorageError('Unavailable', `shard "${shard}"${whose} is ${e?.db ? 'unavailable' : 'not connected'}; retry the request`);
  }

  private refusedHook: ((shard: string) => void) | undefined;

  /** Calls `hook(shard)` for every statement refused because its shard cannot serve (for a metric). */
  onRefused(hook: (shard: string) => void): void {
    this.refusedHook = hook;
  }

  /**
   * ShardRouter.relocated: re-reads where the tenant lives (its Tenant
   * object) a few times over about 250 ms; resolves its shard's pool as
   * soon as that is not `refusedBy` (the move switched), `refusedBy` again
   * when the tenant is fenced there (the move may still switch or roll
   * back: try again), undefined when an unfenced tenant is missing where it
   * still lives (a real refusal).
   */
  async relocated(tenant: string, refusedBy: Database, fenced: boolean): Promise<Database | undefined> {
    for (let i = 0; i < 5; i++) {
      const shard = await this.directory.refresh(tenant);
      const db = this.entries.get(shard)?.db;
      if (db && db !== refusedBy) return this.dbOfShard(shard, tenant);
      if (!fenced && i >= 1) return undefined;
      await new Promise((r) => setTimeout(r, 50));
    }
    return fenced ? refusedBy : undefined;
  }

  shards(): ShardHandle[] {
    return [...this.entries.values()].filter((e) => e.ready && e.db).map((e) => ({ name: e.name, db: e.db! }));
  }

  owns(shard: string, tenant: string): boolean {
    return (this.directory.peek(tenant) ?? DEFAULT_SHARD) === shard;
  }

  /** Every shard this replica knows, ready or not. */
  states(): ShardState[] {
    return [...this.entries.values()].map(({ name, host, ready, error, durability }) => ({ name, host, ready, ...(error ? { error } : {}), ...(durability ? { durability } : {}) }));
  }

  /** The state of one shard, or undefined when it is not registered here. */
  state(name: string): ShardState | undefined {
    const e = this.entries.get(name);
    return e && { name: e.name, host: e.host, ready: e.ready, ...(e.error ? { error: e.error } : {}), ...(e.durability ? { durability: e.durability } : {}) };
  }

  /** The URL a shard was connected with (for its own change feed's LISTEN); undefined when unknown. */
  urlOf(name: string): string | undefined {
    return this.entries.get(name)?.url;
  }

  /**
   * Connects to `url` as shard `name` (replacing an earlier URL), runs the
   * migrations there and probes it. Never throws: a shard that cannot be
   * reached or migrated is kept not ready, with the error (credentials
   * removed), and retried by {@link retry}. Returns its state.
   */
  async connect(name: string, url: string, readReplicaUrl?: string): Promise<ShardState> {
    const state = await this.connectPrimary(name, url);
    // After the primary: a changed URL removed the shard, and its read replica with it.
    if (name !== DEFAULT_SHARD && this.entries.has(name) && this.readReplicaUrls.get(name) !== readReplicaUrl) {
      if (readReplicaUrl === undefined) this.readReplicaUrls.delete(name);
      else this.readReplicaUrls.set(name, readReplicaUrl);
      for (const l of this.listeners) await l.readReplica?.(name, readReplicaUrl);
    }
    return state;
  }

  private async connectPrimary(name: string, url: string): Promise<ShardState> {
    if (name === DEFAULT_SHARD) return this.state(name)!;
    const current = this.entries.get(name);
    if (current && current.url === url) {
      if (!current.ready) await this.bringUp(current);
      return this.state(name)!;
    }
    if (current) await this.remove(name);
    const rowSecurity = rowSecurityOf(this.entries.get(DEFAULT_SHARD)!.db!);
    const db = createDatabase({ connectionString: url, maxConnections: MIN_POOL, connectionTimeoutMs: 2000, rowSecurity, onPoolError: (err) => this.logger.debug({ shard: name, err: redactCredentials(err.message) }, 'shard connection error') });
    const entry: Entry = { name, host: urlHost(url), ready: false, db, url, owned: true, migrated: false, announced: false };
    entry.fence = this.fenceFor(entry);
    entry.probe = new ServerProbe(url, PROBE_TIMEOUT_MS);
    this.entries.set(name, entry);
    this.rebalance();
    await this.bringUp(entry);
    return this.state(name)!;
  }

  /** Records that shard `name` cannot be connected at all (e.g. its Secret is missing); closes a pool it had. */
  async unavailable(name: string, error: string): Promise<void> {
    if (name === DEFAULT_SHARD) return;
    const had = this.entries.get(name);
    if (had) await this.remove(name);
    this.entries.set(name, { name, host: had?.host ?? '', ready: false, error, url: '', owned: false, migrated: false, announced: false });
  }

  /** Closes shard `name`'s pool and forgets it. */
  async remove(name: string): Promise<void> {
    const e = this.entries.get(name);
    if (!e || name === DEFAULT_SHARD) return;
    this.entries.delete(name);
    e.probe?.close();
    if (this.readReplicaUrls.delete(name)) for (const l of this.listeners) await l.readReplica?.(name, undefined);
    for (const l of this.listeners) await l.removed?.(name);
    if (e.owned) await e.db?.destroy().catch(() => undefined);
    this.rebalance();
  }

  /**
   * Migrates `e` (once), probes it and, the first time it answers, tells
   * the listeners. Never throws. A probe that gets no answer within
   * PROBE_TIMEOUT_MS twice in a row (a frozen or unreachable server; once
   * for a shard that never served) makes the shard unavailable and cuts its sessions (no request waits on them,
   * and the pool connects again through a fresh search of the URL's
   * hosts); a fence check that fails (on the request pool, which a busy
   * host may hold up) must fail DOWN_AFTER rounds in a row.
   */
  private async bringUp(e: Entry): Promise<void> {
    if (!e.db) return;
    let lostHistory: FenceState | undefined;
    try {
      await e.probe?.check();
      e.probeFailures = 0;
    } catch (err) {
      // A shard that served stays up through one unanswered probe (a busy host's event loop or scheduler can
      // delay one past its timeout; requests in flight are bounded by the statement deadline meanwhile).
      e.probeFailures = (e.probeFailures ?? 0) + 1;
      if (e.ready && e.probeFailures < DOWN_AFTER) return;
      e.failures = DOWN_AFTER;
      if (e.ready) this.abandonSessions(e);
      this.setReady(e, false, describe(new Error(`${e.host} does not answer: ${(err as Error).message}`), e.host));
      return;
    }
    try {
      if (!e.migrated) {
        // A pooler in transaction mode in front of the shard: not ready, saying why (SessionPoolingError).
        await checkSessionPooling(e.url);
        await migrateToLatest(e.db, migrations);
        e.migrated = true;
      }
      if (e.fence) lostHistory = await this.checkFence(e, e.fence);
    } catch (err) {
      e.failures = (e.failures ?? 0) + 1;
      for (const l of this.listeners) l.primaryProbed?.(e.name, undefined);
      // A shard that served stays up through one missed round; one that never served is down at once.
      if (!e.ready || e.failures >= DOWN_AFTER) {
        if (e.ready) this.abandonSessions(e);
        this.setReady(e, false, describe(err, e.host));
      }
      return;
    }
    e.failures = 0;
    if (this.entries.get(e.name) !== e) return;
    for (const l of this.listeners) l.primaryProbed?.(e.name, e.fenceState);
    this.setReady(e, true);
    // Told once the shard serves again (what they rebuild reads it).
    if (lostHistory) for (const l of this.listeners) await l.historyChanged?.(e.name, lostHistory);
    if (e.announced) return;
    e.announced = true;
    for (const l of this.listeners) await l.added?.({ name: e.name, db: e.db, url: e.url });
  }

  /**
   * Fences the shard's primary when it is new (RevisionFence); returns its
   * state when this replica served it on another timeline and saw revisions
   * the new history lacks (the listeners are told once it serves again).
   */
  private async checkFence(e: Entry, fence: RevisionFence): Promise<FenceState | undefined> {
    let timer: NodeJS.Timeout | undefined;
    const state = await Promise.race([
      fence.check(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${e.host}: the revision fence check did not answer within ${FENCE_TIMEOUT_MS} ms`)), FENCE_TIMEOUT_MS);
      }),
    ]).finally(() => clearTimeout(timer));
    e.fenceState = state;
    e.durability = durabilityOf(state);
    const epoch = `${state.systemIdentifier}/${state.timeline}`;
    const before = e.epoch;
    e.epoch = epoch;
    if (state.fenced) this.logger.warn({ shard: e.name, timeline: state.timeline, counterFound: state.counterFound, raisedTo: state.raisedTo }, 'new primary fenced: revision counter raised past every revision handed out before');
    if (before === undefined || before === epoch) return undefined;
    const seen = Math.max(durableRevision(e.db!), this.seenHook?.(e.name) ?? 0);
    this.logger.warn({ shard: e.name, from: before, to: epoch, seen, counterFound: state.counterFound }, 'the shard has a new primary');
    if (seen <= state.counterFound) return undefined;
    this.logger.warn({ shard: e.name, lostAfter: state.counterFound, seen }, 'the new primary lacks revisions this replica saw: restarting the watch caches; watches from them get 410');
    return state;
  }

  /** The shard stopped answering: ends its sessions (no request waits on a frozen server) and searches its hosts again. */
  private abandonSessions(e: Entry): void {
    hostListConnector(e.url).invalidate();
    if (e.db) dropConnections(e.db);
  }

  private async probeAll(): Promise<void> {
    if (this.probing) return;
    this.probing = true;
    try {
      await Promise.all([...this.entries.values()].map((e) => this.bringUp(e)));
    } finally {
      this.probing = false;
    }
  }

  private setReady(e: Entry, ready: boolean, error?: string): void {
    const changed = e.ready !== ready;
    e.ready = ready;
    e.error = ready ? undefined : error;
    if (!changed) return;
    this.logger[ready ? 'info' : 'warn']({ shard: e.name, host: e.host, error: e.error }, ready ? 'shard is ready' : 'shard is unavailable');
    for (const l of this.listeners) l.readinessChanged?.(e.name, ready);
  }

  /** Splits the replica's connection bound evenly over the shards' pools. */
  private rebalance(): void {
    const n = this.entries.size;
    const each = Math.max(MIN_POOL, Math.floor(this.totalConnections / Math.max(1, n)));
    for (const e of this.entries.values()) if (e.db) setPoolSize(e.db, each);
  }
}

/** The message of a failed connection or migration, with credentials removed and the host named. */
function describe(err: unknown, host: string): string {
  const message = redactCredentials(err instanceof Error ? err.message : String(err));
  return message.includes(host) ? message : `${host}: ${message}`;
}
