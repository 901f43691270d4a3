import { Inject, Module } from '@nestjs/common';
import type { Logger } from 'pino';
import { EncryptionRotationRepository, STORAGE, type Storage } from '@plinth/storage';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { ControllerManager } from '../controllers/controller-manager.js';
import { Metrics } from '../observability/metrics.js';
import { LOGGER } from '../observability/logger.js';
import { ShardPool } from '../sharding/shard-pool.js';
import { ResourceStoreService } from '../resource-store/resource-store.service.js';
import { ResourceStoreModule } from './resource-store.module.js';
import { type DynamicEncryption, ENCRYPTION } from '../encryption/dynamic-encryption.js';
import { EncryptionRotationController } from '../encryption/rotation/encryption-rotation.controller.js';
import { reportOnShard, requestedOn } from '../encryption/rotation/shard-rotation-status.js';
import { RotationMetrics } from '../encryption/rotation/rotation-metrics.js';

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
  objects: Storage,
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
      inject: [ENCRYPTION, APP_CONFIG, ShardPool, ResourceStoreService, STORAGE, ControllerManager, Metrics, LOGGER],
    },
  ],
})
export class EncryptionRotationModule {
  constructor(@Inject(EncryptionRotationController) _rotation: EncryptionRotationController | null) {}
}
