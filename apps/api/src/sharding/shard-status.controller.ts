import type { Logger } from 'pino';
import { isDeepStrictEqual } from 'node:util';
import { DEFAULT_SHARD, type Storage, type TenantRepository } from '@plinth/storage';
import { ApiError, type KubeObject, rfc3339Now } from '@plinth/apimachinery';
import type { Controller } from '../controllers/controller.js';
import { PLATFORM_TENANT } from '../kinds/tenant/tenant-api.js';
import { SHARD_DURABLE_CONDITION } from '../kinds/shard/shard-api.js';
import type { ResourceDefinition } from '../registry/resource-definition.js';
import type { ResourceStoreService } from '../resource-store/resource-store.service.js';
import { systemWriteContext } from '../resource-store/write-context.js';
import type { ShardCatalog } from './shard-catalog.js';
import type { ShardPool } from './shard-pool.js';
import type { ConfiguredShard } from '../config/shard-list.js';

/** How often the Shard objects' status is brought up to date. */
export const SHARD_STATUS_INTERVAL_MS = 3000;

/** What the status controller is built from. */
export interface ShardStatusDeps {
  catalog: ShardCatalog;
  pool: Pick<ShardPool, 'state'>;
  tenants: Pick<TenantRepository, 'shardTotals'>;
  store: Pick<ResourceStoreService, 'create' | 'systemUpdate'>;
  objects: Pick<Storage, 'get'>;
  /** The Shard kind as the platform writes it (its own `default` included). */
  shardResource: ResourceDefinition;
  /** PLINTH_SHARDS: registered at start when their Shard object is missing, with their Secret. */
  configured: ConfiguredShard[];
  /** The Secret kind (core/v1), for the configured shards' Secrets. */
  secretResource: ResourceDefinition;
  logger: Logger;
}

/** The conditions this controller writes. */
const OWN = ['Ready', SHARD_DURABLE_CONDITION];

/** The SurvivesPrimaryLoss condition. */
interface DurableCondition {
  type: typeof SHARD_DURABLE_CONDITION;
  status: 'True' | 'False';
  reason: string;
  message: string;
  lastTransitionTime: string;
}

interface ReadyCondition {
  type: 'Ready';
  status: 'True' | 'False';
  reason: string;
  message: string;
  lastTransitionTime: string;
}

/**
 * Once per cluster (an elected controller): makes sure the `default` Shard
 * object exists (the platform's own database), and every few seconds
 * writes each Shard's status: `Ready` (connected, migrated and answering,
 * as this replica sees it, or the error naming the host), and the tenants,
 * objects and stored bytes living there. A status is written only when it
 * changed. Errors are logged and retried on the next pass.
 */
export class ShardStatusController implements Controller {
  readonly name = 'shard-status-controller';
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;

  constructor(private readonly deps: ShardStatusDeps) {}

  start(): void {
    const pass = () => {
      this.running ??= this.reconcile()
        .catch((err) => this.deps.logger.warn({ err: (err as Error).message }, 'shard status: pass failed'))
        .finally(() => {
          this.running = undefined;
        });
    };
    pass();
    this.timer = setInterval(pass, SHARD_STATUS_INTERVAL_MS);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
  }

  /** One pass: the default Shard object and the configured ones, then every Shard's status. */
  async reconcile(): Promise<void> {
    await this.ensureDefault();
    await this.ensureConfigured();
    for (const shard of this.deps.catalog.all()) await this.refresh(shard.name);
  }

  private async ensureDefault(): Promise<void> {
    if (this.defaultWritten) return;
    await this.createIfMissing(systemWriteContext(PLATFORM_TENANT, this.deps.shardResource), {
      apiVersion: `${this.deps.shardResource.group}/${this.deps.shardResource.version}`,
      kind: 'Shard',
      metadata: { name: DEFAULT_SHARD },
      spec: {},
    });
    this.defaultWritten = true;
  }

  private defaultWritten = false;
  private configuredWritten = false;

  /** Creates a Secret and a Shard for each PLINTH_SHARDS entry that has no Shard object; never changes existing ones. */
  private async ensureConfigured(): Promise<void> {
    if (this.configuredWritten) return;
    for (const { name, url } of this.deps.configured) {
      const key = { tenant: PLATFORM_TENANT, resource: this.deps.shardResource.storageResource, namespace: '', name };
      if (await this.deps.objects.get(key, { internal: true })) continue;
      const secret = `shard-${name}`;
      await this.createIfMissing(systemWriteContext(PLATFORM_TENANT, this.deps.secretResource, 'default'), {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: secret, namespace: 'default' },
        data: { url: Buffer.from(url).toString('base64') },
      });
      await this.createIfMissing(systemWriteContext(PLATFORM_TENANT, this.deps.shardResource), {
        apiVersion: `${this.deps.shardResource.group}/${this.deps.shardResource.version}`,
        kind: 'Shard',
        metadata: { name },
        spec: { secretRef: { name: secret, namespace: 'default', key: 'url' } },
      });
      this.deps.logger.info({ shard: name }, 'registered a shard named in PLINTH_SHARDS');
    }
    this.configuredWritten = true;
  }

  private async createIfMissing(ctx: ReturnType<typeof systemWriteContext>, obj: KubeObject): Promise<void> {
    try {
      await this.deps.store.create(ctx, obj);
    } catch (err) {
      if (!(err instanceof ApiError && err.code === 409)) throw err;
    }
  }

  /** Writes one Shard's status when it differs from what is stored. */
  private async refresh(name: string): Promise<void> {
    const key = { tenant: PLATFORM_TENANT, resource: this.deps.shardResource.storageResource, namespace: '', name };
    const current = (await this.deps.objects.get(key, { internal: true }))?.body as KubeObject | undefined;
    if (!current) return;
    const next = await this.statusOf(name, current);
    if (isDeepStrictEqual(next, current.status)) return;
    try {
      await this.deps.store.systemUpdate(systemWriteContext(PLATFORM_TENANT, this.deps.shardResource), name, (o: KubeObject) => {
        // Keeps the other conditions as stored now: another controller may have written one since the read.
        const others = ((o.status as { conditions?: Array<{ type: string }> } | undefined)?.conditions ?? []).filter((c) => !OWN.includes(c.type));
        const own = (next.conditions as Array<{ type: string }>).filter((c) => OWN.includes(c.type));
        o.status = { ...next, conditions: [...own, ...others] };
      });
    } catch (err) {
      if (err instanceof ApiError && err.code === 404) return;
      throw err;
    }
  }

  /** The status shard `name` should show, given its stored object. */
  private async statusOf(name: string, o: KubeObject): Promise<Record<string, unknown>> {
    const state = this.deps.pool.state(name);
    const totals = state?.ready ? await this.deps.tenants.shardTotals(name).catch(() => undefined) : undefined;
    const ready = state?.ready === true && totals !== undefined;
    const old = (o.status ?? {}) as Record<string, unknown> & { conditions?: Array<ReadyCondition | { type: string }> };
    const before = old.conditions?.find((c): c is ReadyCondition => c.type === 'Ready');
    const status = ready ? 'True' : 'False';
    const condition: ReadyCondition = {
      type: 'Ready',
      status,
      reason: ready ? 'Connected' : 'Unavailable',
      message: ready ? 'connected, migrated and answering' : (state?.error ?? 'not connected yet'),
      lastTransitionTime: before && before.status === status ? before.lastTransitionTime : rfc3339Now(),
    };
    const counts = totals ?? { tenants: old.tenants ?? 0, objects: old.objects ?? 0, bytes: old.bytes ?? 0 };
    // What the primary promises about an acknowledged write, as the last probe saw it (kept as stored until one did).
    const durableBefore = old.conditions?.find((c): c is ReadyCondition => c.type === SHARD_DURABLE_CONDITION) as unknown as DurableCondition | undefined;
    const durable: DurableCondition[] = [];
    if (state?.durability) {
      const st = state.durability.survivesPrimaryLoss ? 'True' : 'False';
      durable.push({
        type: SHARD_DURABLE_CONDITION,
        status: st,
        reason: state.durability.survivesPrimaryLoss ? 'SynchronousStandby' : 'NoSynchronousStandby',
        message: state.durability.message,
        lastTransitionTime: durableBefore && durableBefore.status === st ? durableBefore.lastTransitionTime : rfc3339Now(),
      });
    } else if (durableBefore) durable.push(durableBefore);
    // Other controllers' conditions (the encryption rotation's) stay as they are.
    const others = (old.conditions ?? []).filter((c) => !OWN.includes(c.type));
    return { host: state?.host ?? old.host ?? '', ...counts, observedGeneration: o.metadata.generation, conditions: [condition, ...durable, ...others] };
  }
}
