import { Global, Inject, Module, type OnApplicationShutdown } from '@nestjs/common';
import type { Logger } from 'pino';
import { installResourceTransformers } from '@plinth/storage';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { LOGGER } from '../observability/observability.module.js';
import { Metrics } from '../observability/metrics.js';
import { EXIT_CONFIGURATION, StartupFailure } from '../startup/startup-failure.js';
import { DynamicEncryption } from './dynamic-encryption.js';
import { loadEncryptionConfig } from './encryption-transformers.js';

/** The encryption in force, or null when PLINTH_ENCRYPTION_PROVIDER_CONFIG is not set. */
export const ENCRYPTION = Symbol('ENCRYPTION');

/**
 * Loads PLINTH_ENCRYPTION_PROVIDER_CONFIG and installs it into storage
 * (every repository of the process encrypts and decrypts through it); a bad
 * file stops start-up (exit code 2) with upstream's message naming the
 * field. Without the setting nothing is installed: storage reads and
 * writes bodies as they are.
 */
function createEncryption(config: AppConfig, logger: Logger, metrics: Metrics): DynamicEncryption | null {
  const path = config.encryption.providerConfigFile;
  if (!path) return null;
  let encryption: DynamicEncryption;
  try {
    encryption = new DynamicEncryption({ path, initial: loadEncryptionConfig(path), registry: metrics.registry, logger });
  } catch (err) {
    throw new StartupFailure(`PLINTH_ENCRYPTION_PROVIDER_CONFIG (${path}): ${(err as Error).message}`, EXIT_CONFIGURATION);
  }
  if (config.encryption.automaticReload) encryption.startReloading(config.encryption.reloadIntervalSeconds * 1000);
  logger.info({ path, hash: encryption.configHash, automaticReload: config.encryption.automaticReload }, 'encryption at rest configured');
  return encryption;
}

/** Encryption at rest (upstream's EncryptionConfiguration): global, as storage is. */
@Global()
@Module({
  providers: [{ provide: ENCRYPTION, useFactory: createEncryption, inject: [APP_CONFIG, LOGGER, Metrics] }],
  exports: [ENCRYPTION],
})
export class EncryptionModule implements OnApplicationShutdown {
  private readonly uninstall: () => void;

  constructor(@Inject(ENCRYPTION) private readonly encryption: DynamicEncryption | null) {
    this.uninstall = installResourceTransformers(encryption ?? undefined);
  }

  onApplicationShutdown(): void {
    this.encryption?.stop();
    this.uninstall();
  }
}
