import { isDeepStrictEqual } from 'node:util';
import type { Logger } from 'pino';
import { ApiError, isPlainObject, type KubeObject, Quantity } from '@plinth/apimachinery';
import type { QuotaItem, QuotaRepository, QuotaUsed } from '@plinth/storage';
import type { ResourceRegistry } from '../registry/resource-registry.js';
import type { ResourceStoreService } from '../resource-store/resource-store.service.js';
import { systemWriteContext } from '../resource-store/write-context.js';
import { usageKeyOf } from '../tenancy/tenant-limits.js';
import { resourceQuotaResource } from '../kinds/resourcequota/resource-quota.resource.js';
import type { Controller } from '../controllers/controller.js';
import type { ControllerManager } from '../controllers/controller-manager.js';
import type { WorkQueue } from '../controllers/work-queue.js';

/** Core kinds whose object count upstream quotas under the bare resource name (besides `count/<resource>`). */
const LEGACY_COUNTED = new Set(['configmaps', 'secrets', 'resourcequotas', 'services', 'persistentvolumeclaims', 'pods', 'replicationcontrollers']);
/** How often the quota controller brings quotas' status.used up to the counts. */
export const QUOTA_STATUS_INTERVAL_MS = 2000;

/**
 * What a quota's `spec.hard` counts: `count/<resource>[.<group>]` of any
 * served kind or custom resource (named before its CRD exists too), and the
 * legacy core names (`configmaps`, `secrets`, …). Other names (compute
 * resources) count nothing Plinth serves. Pure.
 */
export function quotaItems(registry: ResourceRegistry, tenant: string, hard: Record<string, unknown>): QuotaItem[] {
  const items: QuotaItem[] = [];
  for (const [name, v] of Object.entries(hard)) {
    const key = name.startsWith('count/') ? name.slice('count/'.length) : LEGACY_COUNTED.has(name) ? name : undefined;
    if (!key) continue;
    const q = Quantity.parse(String(v));
    items.push({ resource: usageKeyOf(registry, tenant, key), hardName: name, max: Number(q.num / q.den) });
  }
  return items;
}

function hardOf(o: KubeObject): Record<string, unknown> {
  return isPlainObject(o.spec) && isPlainObject(o.spec.hard) ? o.spec.hard : {};
}

/** status.used for `hard`: the counts, and 0 for names that count nothing here. */
function usedStatus(hard: Record<string, unknown>, counted: QuotaUsed): Record<string, string> {
  return Object.fromEntries(Object.keys(hard).map((k) => [k, String(counted[k] ?? 0)]));
}

/**
 * ResourceQuota as upstream's quota controller and admission do it, with
 * the counting moved into storage: when a quota is created or its
 * `spec.hard` changes, its counted resources are handed to storage (which
 * counts what exists first, then every create and delete in the namespace,
 * refusing growth past a hard limit in the write's own transaction);
 * `status.hard` and `status.used` are written then (by the replica that
 * took the write) and kept current by a periodic pass, a controller of the
 * ControllerManager (one replica runs it).
 */
export class QuotaSupport implements Controller {
  readonly name = 'resourcequota-controller';
  private timer: NodeJS.Timeout | undefined;
  private readonly queue: WorkQueue;
  private readonly reported = new Map<string, QuotaUsed>();

  constructor(
    private readonly deps: { quotas: QuotaRepository; registry: ResourceRegistry; store: ResourceStoreService; logger: Logger; queues: Pick<ControllerManager, 'queue'> },
  ) {
    this.queue = deps.queues.queue({ name: this.name, workers: 1, process: () => this.refreshOnce() });
  }

  /** Hook after a ResourceQuota was created or updated: applies it to storage and answers with its status. Never throws. */
  readonly afterWrite = async (_ctx: unknown, quota: KubeObject): Promise<KubeObject> => {
    const tenant = (_ctx as { tenant: string }).tenant;
    const namespace = quota.metadata.namespace ?? '';
    const name = quota.metadata.name!;
    try {
      const hard = hardOf(quota);
      await this.deps.quotas.set(tenant, namespace, name, quotaItems(this.deps.registry, tenant, hard));
      const counted = (await this.deps.quotas.used(tenant)).get(`${tenant}/${namespace}/${name}`) ?? {};
      return await this.writeStatus(tenant, namespace, name, hard, counted);
    } catch (err) {
      this.deps.logger.warn({ tenant, namespace, quota: name, err: (err as Error).message }, 'resource quota could not be applied');
      return quota;
    }
  };

  /** Starts the periodic status pass (what another replica reported is written again where it differs). */
  start(): void {
    this.reported.clear();
    this.queue.start();
    this.queue.add('status');
    this.timer = setInterval(() => this.queue.add('status'), QUOTA_STATUS_INTERVAL_MS);
    this.timer.unref();
  }

  /** Stops it and waits for a pass in progress. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.queue.shutDown();
  }

  private async refreshOnce(): Promise<void> {
    for (const [key, counted] of await this.deps.quotas.used()) {
      if (isDeepStrictEqual(this.reported.get(key), counted)) continue;
      const [tenant, namespace, ...rest] = key.split('/');
      try {
        await this.writeStatus(tenant, namespace, rest.join('/'), undefined, counted);
        this.reported.set(key, counted);
      } catch (err) {
        // Gone meanwhile: nothing to report; anything else fails the pass, which is retried.
        if (!(err instanceof ApiError && err.code === 404)) throw err;
      }
    }
  }

  private async writeStatus(tenant: string, namespace: string, name: string, hard: Record<string, unknown> | undefined, counted: QuotaUsed): Promise<KubeObject> {
    return this.deps.store.systemUpdate(systemWriteContext(tenant, resourceQuotaResource, namespace), name, (o) => {
      const h = hard ?? hardOf(o);
      const status = { hard: { ...h }, used: usedStatus(h, counted) };
      if (!isDeepStrictEqual(o.status, status)) o.status = status;
    });
  }
}
