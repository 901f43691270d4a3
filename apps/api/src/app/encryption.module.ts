import { createHash } from 'node:crypto';
import { hostname } from 'node:os';
import { Global, Inject, Module, type OnApplicationShutdown } from '@nestjs/common';
import type { Logger } from 'pino';
import { configurePlaintextCache, defaultKeyStoreUrl, forgetTenantPlaintexts, installResourceTransformers, setCorruptObjectReporting, TenantKeyStore } from '@plinth/storage';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { DatabaseConnection } from '../database/database-connection.js';
import { LOGGER } from '../observability/logger.js';
import { Metrics } from '../observability/metrics.js';
import { EXIT_CONFIGURATION, StartupFailure } from '../startup/startup-failure.js';
import { DynamicEncryption, ENCRYPTION } from '../encryption/dynamic-encryption.js';
import { TenantDataKeys } from '../encryption/tenant-data-keys.js';
import { readEncryptionConfigFile } from '../encryption/encryption-config.parser.js';
import { loadEncryptionConfig } from '../encryption/encryption-transformers.js';
import { KmsMetrics } from '../encryption/kms/kms-metrics.js';
import { KmsRegistry } from '../encryption/kms/kms-registry.js';

/** True when the file names a KMS v2 provider (then the tenants' key store is opened). A file that cannot be read: false (loading it says why). */
function namesKmsV2(path: string): boolean {
  try {
    return readEncryptionConfigFile(path).config.resources.some((r) => r.providers.some((p) => p.kms?.apiVersion === 'v2'));
  } catch {
    return false;
  }
}

/**
 * The KMS v2 providers' registry, with the tenants' key store open when the
 * file names a kms provider (PLINTH_KEY_STORE_URL, or beside the object
 * database). A key store that cannot be opened stops start-up.
 */
async function createKmsRegistry(config: AppConfig, path: string, connection: DatabaseConnection, logger: Logger, metrics: Metrics): Promise<KmsRegistry> {
  let keyStore: TenantKeyStore | undefined;
  if (namesKmsV2(path)) {
    const url = config.encryption.keyStoreUrl ?? defaultKeyStoreUrl(connection.url);
    try {
      keyStore = await TenantKeyStore.open(url, connection.url);
    } catch (err) {
      throw new StartupFailure(`PLINTH_KEY_STORE_URL: cannot open the tenants' key store: ${(err as Error).message}`, EXIT_CONFIGURATION);
    }
  }
  const apiServerIdHash = `sha256:${createHash('sha256').update(`${hostname()}-${process.pid}`).digest('hex')}`;
  const interval = config.encryption.kmsStatusIntervalSeconds;
  return new KmsRegistry({ keyStore, metrics: new KmsMetrics(metrics.registry), logger, apiServerIdHash, statusIntervalMs: interval === undefined ? undefined : interval * 1000 });
}

/**
 * Loads PLINTH_ENCRYPTION_PROVIDER_CONFIG and installs it into storage
 * (every repository of the process encrypts and decrypts through it); a bad
 * file stops start-up (exit code 2) with upstream's message naming the
 * field, and so does a kms endpoint with no socket. Without the setting
 * nothing is installed: storage reads and writes bodies as they are.
 */
async function createEncryption(config: AppConfig, logger: Logger, metrics: Metrics, connection: DatabaseConnection): Promise<DynamicEncryption | null> {
  const path = config.encryption.providerConfigFile;
  if (!path) return null;
  configurePlaintextCache(config.encryption.readCacheBytes);
  const kms = await createKmsRegistry(config, path, connection, logger, metrics);
  let encryption: DynamicEncryption;
  try {
    const initial = loadEncryptionConfig(path, kms);
    encryption = new DynamicEncryption({ path, initial, registry: metrics.registry, logger, kms });
    await kms.settle([...initial.kms.values()]);
  } catch (err) {
    await kms.close();
    throw new StartupFailure(`PLINTH_ENCRYPTION_PROVIDER_CONFIG (${path}): ${(err as Error).message}`, EXIT_CONFIGURATION);
  }
  if (config.encryption.automaticReload) encryption.startReloading(config.encryption.reloadIntervalSeconds * 1000);
  logger.info({ path, hash: encryption.configHash, automaticReload: config.encryption.automaticReload, kmsProviders: [...kms.all().map((p) => p.name)] }, 'encryption at rest configured');
  return encryption;
}

/** Encryption at rest (upstream's EncryptionConfiguration): global, as storage is. */
@Global()
@Module({
  providers: [{ provide: ENCRYPTION, useFactory: createEncryption, inject: [APP_CONFIG, LOGGER, Metrics, DatabaseConnection] }, TenantDataKeys],
  exports: [ENCRYPTION, TenantDataKeys],
})
export class EncryptionModule implements OnApplicationShutdown {
  private readonly uninstall: () => void;
  private readonly unreport: () => void;

  constructor(@Inject(ENCRYPTION) private readonly encryption: DynamicEncryption | null, @Inject(APP_CONFIG) config: AppConfig) {
    this.uninstall = installResourceTransformers(encryption ?? undefined);
    // KEP-3926: gets and lists report unreadable objects as corrupt objects (upstream's AllowUnsafeMalformedObjectDeletion).
    this.unreport = setCorruptObjectReporting(config.featureGates.enabled('AllowUnsafeMalformedObjectDeletion'));
  }

  async onApplicationShutdown(): Promise<void> {
    this.encryption?.stop();
    this.uninstall();
    this.unreport();
    await this.encryption?.kmsRegistry?.close();
  }
}
