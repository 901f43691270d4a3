import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import { LRUCache } from 'lru-cache';
import { Counter, type Registry } from 'prom-client';
import { ConfigReloadMetrics } from '../observability/config-reload-metrics.js';
import { type ObjectKey, objectKeyId, plaintextCacheStats, type ResourceTransformer, type ResourceTransformers, type TransformationEvent } from '@plinth/storage';
import { scrapedCounter, scrapedGauge } from '../observability/scraped-metrics.js';
import type { KmsRegistry } from './kms/kms-registry.js';
import type { KmsV2Provider, KmsValueHeader } from './kms/kms-v2.provider.js';
import { encryptionConfigHash } from './encryption-config.parser.js';
import { type LoadedEncryption, loadEncryptionConfig, ruleFor, storageGroupResource, type TransformerRules } from './encryption-transformers.js';

/** Upstream's metrics of value transformations and of the configuration's automatic reload. */
class EncryptionMetrics {
  readonly operations: Counter<'resource' | 'transformation_type' | 'transformer_prefix' | 'status'>;
  /** The configuration file's automatic reloads. */
  readonly reload: ConfigReloadMetrics;

  constructor(registry: Registry) {
    const registers = [registry];
    this.operations = new Counter({
      name: 'apiserver_storage_transformation_operations_total',
      help: 'Total number of transformations. Successful transformation will have a status \'OK\' and a varied status string when the transformation fails.',
      labelNames: ['resource', 'transformation_type', 'transformer_prefix', 'status'],
      registers,
    });
    this.reload = new ConfigReloadMetrics(registry, 'encryption', {
      reloads: 'Total number of reload successes and failures of encryption configuration split by apiserver identity.',
      lastReload: 'Timestamp of the last successful or failed automatic reload of encryption configuration split by apiserver identity.',
    });
    registerReadCacheMetrics(registers);
  }
}

/** Plinth's own: the plaintext cache of encrypted reads (PLINTH_ENCRYPTION_READ_CACHE_MB), read when scraped. */
function registerReadCacheMetrics(registers: Registry[]): void {
  scrapedCounter(registers, 'plinth_encryption_read_cache_hits_total', 'Reads of an encrypted value answered from the plaintext cache (no decryption).', () => plaintextCacheStats().hits);
  scrapedCounter(registers, 'plinth_encryption_read_cache_misses_total', 'Reads of an encrypted value the plaintext cache could not answer (decrypted).', () => plaintextCacheStats().misses);
  scrapedGauge(registers, 'plinth_encryption_read_cache_entries', 'Plaintexts held by the cache.', () => plaintextCacheStats().entries);
  scrapedGauge(registers, 'plinth_encryption_read_cache_bytes', 'Bytes of the strings the cache holds (its bound: PLINTH_ENCRYPTION_READ_CACHE_MB).', () => plaintextCacheStats().bytes);
}

/** Options of {@link DynamicEncryption}. */
export interface DynamicEncryptionOptions {
  /** The EncryptionConfiguration file (PLINTH_ENCRYPTION_PROVIDER_CONFIG). */
  path: string;
  /** Its configuration as loaded at start-up. */
  initial: LoadedEncryption;
  registry: Registry;
  logger: Logger;
  /** The process's KMS v2 providers (reloads build theirs from it). */
  kms?: KmsRegistry;
}

const KMS_PREFIX = 'k8s:enc:kms:v2:';

/**
 * The process's encryption configuration as storage uses it (installed
 * with installResourceTransformers): the rules of the file loaded last,
 * swapped whole on a successful reload (upstream's DynamicTransformers and
 * its automatic-reload controller). A reload that fails keeps the rules in
 * force, logs why and counts a failure.
 */
export class DynamicEncryption implements ResourceTransformers {
  private rules: TransformerRules;
  private hash: string;
  private kms: Map<string, KmsV2Provider>;
  /** Rules by storage resource, resolved once per configuration. */
  private readonly byResource = new Map<string, ResourceTransformer | undefined>();
  private readonly metrics: EncryptionMetrics;
  private readonly idHash: string;
  private timer: NodeJS.Timeout | undefined;
  /**
   * The header of each object's KMS v2 value read last, with the value (a
   * pure function of it, so a hit needs the very same value): every read
   * asks (prepare), and decoding the whole EncryptedObject was most of what
   * a cached read cost. By object, so a lookup hashes a short key, not the
   * value.
   */
  private readonly kmsHeaders = new LRUCache<string, { sealed: string; header: KmsValueHeader }>({
    maxSize: 16 * 1024 * 1024,
    sizeCalculation: (e, id) => 2 * (e.sealed.length + id.length) + 128,
  });

  constructor(private readonly opts: DynamicEncryptionOptions) {
    this.rules = opts.initial.rules;
    this.hash = opts.initial.hash;
    this.kms = opts.initial.kms;
    this.metrics = new EncryptionMetrics(opts.registry);
    this.idHash = `sha256:${createHash('sha256').update(`${hostname()}-${process.pid}`).digest('hex')}`;
    this.metrics.reload.applied(this.idHash, this.hash);
  }

  /** The hash of the configuration in force (upstream's `sha256:<hex>` of the file). */
  get configHash(): string {
    return this.hash;
  }

  /** The process's KMS v2 registry (its key store included), when one was given. */
  get kmsRegistry(): KmsRegistry | undefined {
    return this.opts.kms;
  }

  /** The KMS v2 providers of the configuration in force (for health and tenant deletion). */
  kmsProviders(): KmsV2Provider[] {
    return [...this.kms.values()];
  }

  prepare(key: ObjectKey, sealed?: string): Promise<void> | undefined {
    const found = sealed === undefined ? undefined : this.kmsOf(key, sealed);
    return found?.provider.prepareRead(found.header.ref);
  }

  isStale(key: ObjectKey, sealed: string): boolean {
    const found = this.kmsOf(key, sealed);
    if (!found) return false;
    return found.header.keyID === undefined || found.provider.isStaleKeyId(found.header.keyID);
  }

  /** Remembers the header of a KMS v2 value just written (its provider knows it), so that reading it back decodes nothing. */
  private rememberWritten(key: ObjectKey, sealed: string): void {
    if (this.kms.size === 0 || !sealed.startsWith(KMS_PREFIX)) return;
    const header = this.kms.get(sealed.slice(KMS_PREFIX.length, sealed.lastIndexOf(':')))?.writtenHeader();
    if (header) this.kmsHeaders.set(objectKeyId(key), { sealed, header });
  }

  /** The KMS v2 provider that wrote `sealed` (a stored value of `key`) and what its payload names, or undefined for any other value. */
  private kmsOf(key: ObjectKey, sealed: string): { provider: KmsV2Provider; header: KmsValueHeader } | undefined {
    if (this.kms.size === 0 || !sealed.startsWith(KMS_PREFIX)) return undefined;
    const colon = sealed.lastIndexOf(':');
    const provider = this.kms.get(sealed.slice(KMS_PREFIX.length, colon));
    if (!provider) return undefined;
    const id = objectKeyId(key);
    const known = this.kmsHeaders.get(id);
    if (known?.sealed === sealed) return { provider, header: known.header };
    const header = provider.headerOf(Buffer.from(sealed.slice(colon + 1), 'base64'));
    this.kmsHeaders.set(id, { sealed, header });
    return { provider, header };
  }

  forResource(resource: string): ResourceTransformer | undefined {
    if (this.byResource.has(resource)) return this.byResource.get(resource);
    const rule = ruleFor(this.rules, resource);
    this.byResource.set(resource, rule);
    return rule;
  }

  observe(e: TransformationEvent): void {
    if (e.sealed !== undefined) this.rememberWritten(e.key, e.sealed);
    const { group, resource } = storageGroupResource(e.key.resource);
    const gr = group ? `${resource}.${group}` : resource;
    // Upstream's status is a gRPC code; a provider's own error is Unknown.
    this.metrics.operations.inc({ resource: gr, transformation_type: e.type, transformer_prefix: e.prefix, status: e.error === undefined ? 'OK' : 'Unknown' });
    if (e.error !== undefined) {
      const { tenant, namespace, name } = e.key;
      this.opts.logger.error({ tenant, resource: gr, namespace, name, err: e.error }, e.type === 'from_storage' ? 'failed to decrypt data' : 'failed to encrypt data');
    }
  }

  /** Checks the file every `intervalMs` and reloads it when its content changed (upstream polls every minute). */
  startReloading(intervalMs: number): void {
    this.timer = setInterval(() => this.reload(), intervalMs);
    this.timer.unref();
  }

  /** Stops checking the file. */
  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /**
   * Reloads the file when its content changed: returns 'unchanged',
   * 'reloaded', or 'failed' (the rules in force stay; logged and counted).
   * Never throws.
   */
  reload(): 'unchanged' | 'reloaded' | 'failed' {
    const { path, logger } = this.opts;
    const now = Date.now() / 1000;
    try {
      if (encryptionConfigHash(readFileSync(path)) === this.hash) return 'unchanged';
      const loaded = loadEncryptionConfig(path, this.opts.kms);
      if (loaded.hash === this.hash) return 'unchanged';
      this.rules = loaded.rules;
      this.hash = loaded.hash;
      this.kms = loaded.kms;
      // New providers start (their first Status call) in the background; writes through them wait for it (503 until then).
      void this.opts.kms?.settle([...loaded.kms.values()]);
      this.byResource.clear();
      this.metrics.reload.applied(this.idHash, loaded.hash);
      this.metrics.reload.reloaded('success', this.idHash, now);
      logger.info({ path, hash: loaded.hash }, 'loaded new encryption config content');
      return 'reloaded';
    } catch (err) {
      this.metrics.reload.reloaded('failure', this.idHash, now);
      logger.error({ path, err: (err as Error).message }, `error processing encryption config file ${path}: ${(err as Error).message}; the configuration in force stays`);
      return 'failed';
    }
  }
}

/** The encryption in force, or null when PLINTH_ENCRYPTION_PROVIDER_CONFIG is not set. */
export const ENCRYPTION = Symbol('ENCRYPTION');
