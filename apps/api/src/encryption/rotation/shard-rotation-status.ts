import { ApiError, type KubeObject, rfc3339Now } from '@plinth/apimachinery';
import type { Storage } from '@plinth/storage';
import { platformShardResource } from '../../kinds/shard/shard.resource.js';
import { PLATFORM_TENANT } from '../../kinds/tenant/tenant-api.js';
import type { ResourceStoreService } from '../../resource-store/resource-store.service.js';
import { systemWriteContext } from '../../resource-store/write-context.js';
import { ROTATE_ANNOTATION, ROTATION_CONDITION, type RotationCondition } from './encryption-rotation.controller.js';

interface StoredCondition extends RotationCondition {
  type: string;
  lastTransitionTime: string;
}

/** Sets the rotation's condition among `o`'s status conditions, keeping its transition time when its status is unchanged. Mutates `o`. */
export function setRotationCondition(o: KubeObject, c: RotationCondition): void {
  const status = (o.status ??= {}) as { conditions?: StoredCondition[] };
  const conditions = status.conditions ?? [];
  const old = conditions.find((x) => x.type === ROTATION_CONDITION);
  const next: StoredCondition = { type: ROTATION_CONDITION, ...c, lastTransitionTime: old && old.status === c.status ? old.lastTransitionTime : rfc3339Now() };
  status.conditions = [...conditions.filter((x) => x.type !== ROTATION_CONDITION), next];
}

/** Writes `condition` on Shard `shard` (a system write of its status); a Shard not created yet is not an error. */
export async function reportOnShard(store: ResourceStoreService, shard: string, condition: RotationCondition): Promise<void> {
  try {
    await store.systemUpdate(systemWriteContext(PLATFORM_TENANT, platformShardResource), shard, (o) => setRotationCondition(o, condition));
  } catch (err) {
    if (err instanceof ApiError && err.code === 404) throw new Error(`Shard ${shard} does not exist yet`);
    throw err;
  }
}

/** The Shard's {@link ROTATE_ANNOTATION} value (internal read), or undefined. */
export async function requestedOn(objects: Storage, shard: string): Promise<string | undefined> {
  const o = await objects.get({ tenant: PLATFORM_TENANT, resource: platformShardResource.storageResource, namespace: '', name: shard }, { internal: true });
  const value = (o?.body as KubeObject | undefined)?.metadata?.annotations?.[ROTATE_ANNOTATION];
  return typeof value === 'string' ? value : undefined;
}
