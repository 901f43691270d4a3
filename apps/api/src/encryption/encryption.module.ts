import { createHash } from 'node:crypto';
import { hostname } from 'node:os';
import { Global, Inject, Injectable, Module, type OnApplicationShutdown } from '@nestjs/common';
import type { Logger } from 'pino';
import { configurePlaintextCache, defaultKeyStoreUrl, forgetTenantPlaintexts, installResourceTransformers, setCorruptObjectReporting, TenantKeyStore } from '@plinth/storage';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { DatabaseConnection } from '../database/database.module.js';
import { LOGGER } from '../observability/observability.module.js';
import { Metrics } from '../observability/metrics.js';
import { EXIT_CONFIGURATION, StartupFailure } from '../startup/startup-failure.js';
import { DynamicEncryption } from './dynamic-encryption.js';
import { readEncryptionConfigFile } from './encryption-config.parser.js';
import { loadEncryptionConfig } from './encryption-transformers.js';
import { KmsMetrics } from './kms/kms-metrics.js';
import { KmsRegistry } from './kms/kms-registry.js';

/** The encryption in force, or null when PLINTH_ENCRYPTION_PROVIDER_CONFIG is not set. */
export const ENCRYPTION = Symbol('ENCRYPTION');

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

/**
 * The tenants' data keys as tenant deletion sees them: destroying them is
 * the crypto-erasure of the tenant's encrypted objects, in every backup of
 * the object database.
 */
@Injectable()
export class TenantDataKeys {
  constructor(@Inject(ENCRYPTION) private readonly encryption: DynamicEncryption | null) {}

  /**
   * Destroys every data key of `tenant` in the key store and forgets those
   * this process holds, and the plaintexts it decrypted with them; returns how many were destroyed (0 when no kms
   * provider is configured). Idempotent. Rejects when the key store cannot
   * be reached (the deletion must then stop and be retried).
   */
  /**
   * Forgets what this process holds of `tenant`'s data keys (every seed,
   * read and write, of every provider) and the plaintexts decrypted with
   * them; the key store is not touched. Every replica and worker calls it
   * when it learns of the tenant's deletion. Synchronous; idempotent.
   */
  forget(tenant: string): void {
    forgetTenantPlaintexts(tenant);
    for (const p of this.encryption?.kmsRegistry?.all() ?? []) p.forgetTenant(tenant);
  }

  async destroy(tenant: string): Promise<number> {
    forgetTenantPlaintexts(tenant);
    const registry = this.encryption?.kmsRegistry;
    if (!registry?.keyStore) return 0;
    const n = await registry.keyStore.destroyTenant(tenant);
    // The seeds, and again the plaintexts: a read that decrypted before the keys went may have remembered its plaintext since.
    this.forget(tenant);
    return n;
  }
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
