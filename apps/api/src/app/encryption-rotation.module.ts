import { Inject, Module } from '@nestjs/common';
import type { Logger } from 'pino';
import { ApiError, type KubeObject, rfc3339Now } from '@plinth/apimachinery';
import { EncryptionRotationRepository, ObjectStoreRepository } from '@plinth/storage';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { ControllerManager } from '../controllers/controller-manager.js';
import { platformShardResource } from '../kinds/shard/shard.resource.js';
import { PLATFORM_TENANT } from '../kinds/tenant/tenant-api.js';
import { Metrics } from '../observability/metrics.js';
import { LOGGER } from '../observability/logger.js';
import { ShardPool } from '../sharding/shard-pool.js';
import { ResourceStoreService } from '../resource-store/resource-store.service.js';
import { ResourceStoreModule } from './resource-store.module.js';
import { systemWriteContext } from '../resource-store/write-context.js';
import { type DynamicEncryption, ENCRYPTION } from '../encryption/dynamic-encryption.js';
import { EncryptionRotationController, ROTATE_ANNOTATION, ROTATION_CONDITION, type RotationCondition } from '../encryption/rotation/encryption-rotation.controller.js';
import { RotationMetrics } from '../encryption/rotation/rotation-metrics.js';

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
async function reportOnShard(store: ResourceStoreService, shard: string, condition: RotationCondition): Promise<void> {
  try {
    await store.systemUpdate(systemWriteContext(PLATFORM_TENANT, platformShardResource), shard, (o) => setRotationCondition(o, condition));
  } catch (err) {
    if (err instanceof ApiError && err.code === 404) throw new Error(`Shard ${shard} does not exist yet`);
    throw err;
  }
}

/** The Shard's {@link ROTATE_ANNOTATION} value (internal read), or undefined. */
async function requestedOn(objects: ObjectStoreRepository, shard: string): Promise<string | undefined> {
  const o = await objects.get({ tenant: PLATFORM_TENANT, resource: platformShardResource.storageResource, namespace: '', name: shard }, undefined, true);
  const value = (o?.body as KubeObject | undefined)?.metadata?.annotations?.[ROTATE_ANNOTATION];
  return typeof value === 'string' ? value : undefined;
}

/**
 * The encryption rotation job, registered with the controller manager (one
 * replica runs it) when PLINTH_ENCRYPTION_PROVIDER_CONFIG is set; see
 * EncryptionRotationController.
 */
function createRotation(
  encryption: DynamicEncryption | null,
  config: AppConfig,
  pool: ShardPool,
  store: ResourceStoreService,
  objects: ObjectStoreRepository,
  manager: ControllerManager,
  metrics: Metrics,
  logger: Logger,
): EncryptionRotationController | null {
  if (!encryption) return null;
  const controller = new EncryptionRotationController({
    configHash: () => encryption.configHash,
    shards: () => pool.shards(),
    requested: (shard) => requestedOn(objects, shard),
    repository: new EncryptionRotationRepository(),
    report: (shard, condition) => reportOnShard(store, shard, condition),
    metrics: new RotationMetrics(metrics.registry),
    logger,
    settleMs: config.encryption.automaticReload ? config.encryption.reloadIntervalSeconds * 1000 : 0,
    rowsPerSecond: config.encryption.rotationRowsPerSecond,
  });
  manager.register(controller);
  return controller;
}

/** Rotation of encryption at rest: re-encrypts stored values when the first provider or key changes. */
@Module({
  imports: [ResourceStoreModule],
  providers: [
    {
      provide: EncryptionRotationController,
      useFactory: createRotation,
      inject: [ENCRYPTION, APP_CONFIG, ShardPool, ResourceStoreService, ObjectStoreRepository, ControllerManager, Metrics, LOGGER],
    },
  ],
})
export class EncryptionRotationModule {
  constructor(@Inject(EncryptionRotationController) _rotation: EncryptionRotationController | null) {}
}
