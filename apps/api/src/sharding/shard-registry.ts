import type { Logger } from 'pino';
import { type ChangeSource, DEFAULT_SHARD, STORAGE, type Storage } from '@plinth/storage';
import { isPlainObject, type KubeObject } from '@plinth/apimachinery';
import { PLATFORM_TENANT } from '../kinds/tenant/tenant-api.js';
import { SHARD_STORAGE_RESOURCE, type ShardCatalog, shardView, type ShardSpecView } from './shard-catalog.js';
import type { ShardPool } from './shard-pool.js';

/** How often shards that could not be connected (no Secret yet, a bad URL) are tried again. */
const RETRY_MS = 5000;

/** What the registry is built from. */
export interface ShardRegistryDeps {
  catalog: ShardCatalog;
  pool: ShardPool;
  /** Reads Secrets of the platform scope. */
  objects: Pick<Storage, 'get'>;
  /** Every Shard object now. */
  listShards: () => Promise<KubeObject[]>;
  changes: ChangeSource;
  logger: Logger;
}

/**
 * On every replica: follows the Shard objects (and the Secrets they name)
 * and keeps the replica's pools in step: a new or changed Shard is
 * connected with the URL its Secret holds (and migrated), a deleted one
 * closed; a Secret that is missing or lacks its key leaves the shard not
 * ready with a message saying so. Never throws from a change: what cannot
 * be connected is retried every few seconds.
 */
export class ShardRegistry {
  private stops: Array<() => void> = [];
  private timer: NodeJS.Timeout | undefined;
  private readonly syncing = new Map<string, Promise<void>>();

  constructor(private readonly deps: ShardRegistryDeps) {}

  /** Loads every Shard object and connects them; then follows their changes. */
  async start(): Promise<void> {
    const { changes } = this.deps;
    this.stops.push(
      changes.observe(SHARD_STORAGE_RESOURCE, {
        onChange: (c) => {
          if (c.key.tenant !== PLATFORM_TENANT) return;
          if (c.type === 'DELETED') void this.forget(c.key.name);
          else void this.sync(shardView(c.object as KubeObject));
        },
        onReset: () => void this.loadAll(),
      }),
      changes.observe('secrets', {
        onChange: (c) => {
          if (c.key.tenant !== PLATFORM_TENANT) return;
          for (const name of this.deps.catalog.usingSecret(c.key.namespace, c.key.name)) void this.sync(this.deps.catalog.get(name)!);
        },
        onReset: () => undefined,
      }),
    );
    await this.loadAll();
    this.timer = setInterval(() => this.retryUnconnected(), RETRY_MS);
    this.timer.unref();
  }

  /** Stops following (pools are closed by the pool itself at shutdown). */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    for (const stop of this.stops) stop();
    this.stops = [];
    await Promise.all(this.syncing.values());
  }

  private async loadAll(): Promise<void> {
    let objects: KubeObject[];
    try {
      objects = await this.deps.listShards();
    } catch (err) {
      this.deps.logger.warn({ err: (err as Error).message }, 'shards: listing Shard objects failed; retrying');
      return;
    }
    await Promise.all(objects.map((o) => this.sync(shardView(o))));
  }

  private retryUnconnected(): void {
    for (const s of this.deps.pool.states()) {
      const view = this.deps.catalog.get(s.name);
      if (!s.ready && view && !this.deps.pool.urlOf(s.name)) void this.sync(view);
    }
  }

  /** Connects (or reconnects) one shard as its object and Secret say; one sync per shard at a time. */
  sync(view: ShardSpecView): Promise<void> {
    this.deps.catalog.put(view);
    if (view.name === DEFAULT_SHARD) return Promise.resolve();
    const before = this.syncing.get(view.name) ?? Promise.resolve();
    const next = before.then(() => this.connect(view)).catch((err) => this.deps.logger.warn({ shard: view.name, err: (err as Error).message }, 'shards: sync failed'));
    this.syncing.set(view.name, next);
    void next.finally(() => {
      if (this.syncing.get(view.name) === next) this.syncing.delete(view.name);
    });
    return next;
  }

  private async connect(view: ShardSpecView): Promise<void> {
    const url = await this.urlOf(view);
    if (typeof url !== 'string') return this.deps.pool.unavailable(view.name, url.error);
    // A read replica's key that is missing or empty leaves the shard without one (its reads go to the primary).
    const replica = view.secret?.readReplicaKey ? await this.urlOf(view, view.secret.readReplicaKey) : undefined;
    await this.deps.pool.connect(view.name, url, typeof replica === 'string' ? replica : undefined);
  }

  /** The connection URL the shard's Secret holds (under `key`, default its `key`), or why there is none. */
  private async urlOf(view: ShardSpecView, key = view.secret?.key): Promise<string | { error: string }> {
    const ref = view.secret && { ...view.secret, key: key! };
    if (!ref) return { error: 'spec.secretRef names no Secret' };
    const secret = await this.deps.objects.get({ tenant: PLATFORM_TENANT, resource: 'secrets', namespace: ref.namespace, name: ref.name }, { internal: true });
    if (!secret) return { error: `Secret ${ref.namespace}/${ref.name} not found` };
    const body = secret.body as KubeObject & { data?: unknown; stringData?: unknown };
    const data = isPlainObject(body.data) ? body.data : {};
    const value = data[ref.key];
    if (typeof value !== 'string' || value === '') return { error: `Secret ${ref.namespace}/${ref.name} has no key "${ref.key}"` };
    return Buffer.from(value, 'base64').toString('utf8').trim();
  }

  private async forget(name: string): Promise<void> {
    this.deps.catalog.delete(name);
    await this.deps.pool.remove(name);
  }
}
