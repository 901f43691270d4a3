import { randomBytes, randomUUID } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { Logger } from 'pino';
import {
  DataKeyNeeded,
  decodeEncryptedObject,
  DEK_SOURCE_HKDF_SHA256_XNONCE_AES_GCM_SEED,
  encodeEncryptedObject,
  HKDF_SEED_SIZE,
  HkdfGcmTransformer,
  type ReadValue,
  StorageError,
  type TenantDataKey,
  type TenantKeyStore,
  type TransformContext,
  type ValueTransformer,
} from '@plinth/storage';
import { keyIdHash, type KmsMetrics } from './kms-metrics.js';
import { KmsV2Client } from './kms-v2.service.js';

/** What an encrypted object names as its data key: the key store's row, never the wrapped seed (see TenantKeyStore). */
const REF_PREFIX = 'plinth-key-store:';
/** How long a tenant's write key is used before the key store is asked again (a tenant deleted elsewhere stops writing with it by then). */
const WRITE_KEY_TTL_MS = 30_000;
/** Upstream's KMS v2 cache TTL of unwrapped seeds. */
const SEED_TTL_MS = 24 * 3600 * 1000;
const SEED_CACHE_MAX = 100_000;

/** What a KMS v2 provider needs besides its configuration. */
export interface KmsProviderDeps {
  keyStore: TenantKeyStore;
  metrics: KmsMetrics;
  logger: Logger;
  apiServerIdHash: string;
  /** Status poll interval; undefined: upstream's 60 s while healthy, 10 s while not. */
  statusIntervalMs?: number;
}

/** The plugin's health as the last Status call saw it. */
export interface KmsHealth {
  healthy: boolean;
  /** The current write key (empty until a Status call succeeded). */
  keyId: string;
  error?: string;
}

interface WriteKey {
  ref: string;
  keyId: string;
  transformer: HkdfGcmTransformer;
  expires: number;
  /** Counts a write under this key_id (the metric's labelled child, resolved once). */
  count: () => void;
}

/** The parts of a stored KMS v2 value a read needs before decrypting: undefined where the value does not have them (it then fails to read). */
export interface KmsValueHeader {
  keyID: string | undefined;
  ref: string | undefined;
}

/**
 * One `kms` provider (apiVersion v2): upstream's envelope transformer,
 * with a data-key seed per tenant and KMS key generation kept in the
 * {@link TenantKeyStore}, wrapped by the plugin. Each write derives a
 * one-use key from the tenant's seed (HKDF, upstream's extended-nonce
 * AES-GCM) and stores upstream's EncryptedObject whose
 * `encryptedDEKSource` names the key store's row: no KMS call per write or
 * read once the seed is in memory. A seed not in memory is fetched
 * asynchronously ({@link DataKeyNeeded}); the plugin's Status is polled
 * for health and `key_id` changes. Writes are refused (503) while the
 * plugin is unhealthy; reads with seeds in memory go on.
 */
export class KmsV2Provider implements ValueTransformer {
  readonly prefix: Buffer;
  private readonly client: KmsV2Client;
  private health: KmsHealth = { healthy: false, keyId: '', error: 'no Status call has succeeded yet' };
  private readonly seeds = new LRUCache<string, HkdfGcmTransformer>({ max: SEED_CACHE_MAX, ttl: SEED_TTL_MS, dispose: (_t, ref) => this.seedTenants.delete(ref) });
  /** The tenant of each seed in memory (key-store row → tenant), so that a deleted tenant's seeds are all forgotten. */
  private readonly seedTenants = new Map<string, string>();
  /** Objects whose data key is gone from the key store: their reads fail at once with this message. */
  private readonly erased = new LRUCache<string, string>({ max: 10_000, ttl: 60_000 });
  private readonly writeKeys = new Map<string, WriteKey>();
  /**
   * The header of the value this provider wrote last: storage observes each
   * write synchronously right after it (see writtenHeader), so the change
   * feed's read of that value need not decode it.
   */
  private lastWritten: KmsValueHeader | undefined;
  private readonly loading = new Map<string, Promise<void>>();
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    readonly name: string,
    readonly endpoint: string,
    readonly timeoutMs: number,
    private readonly deps: KmsProviderDeps,
  ) {
    this.prefix = Buffer.from(`k8s:enc:kms:v2:${name}:`);
    this.client = new KmsV2Client(endpoint, timeoutMs, (method, code, seconds) =>
      deps.metrics.kmsLatency.observe({ provider_name: name, method_name: method, grpc_status_code: code }, seconds),
    );
  }

  /** The plugin's health as last seen. */
  get status(): KmsHealth {
    return this.health;
  }

  /** Calls Status once now, then keeps polling it until {@link stop}. Never rejects. */
  async start(): Promise<void> {
    await this.checkStatus();
    this.schedule();
  }

  /** Stops polling and closes the channel. */
  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.client.close();
  }

  private schedule(): void {
    if (this.stopped) return;
    const ms = this.deps.statusIntervalMs ?? (this.health.healthy ? 60_000 : 10_000);
    this.timer = setTimeout(() => {
      void this.checkStatus().finally(() => this.schedule());
    }, ms);
    this.timer.unref();
  }

  /**
   * Calls the plugin's Status and records what it says, as upstream's
   * health check does: healthz must be `ok`, version `v2`, key_id set.
   * A new key_id makes the next write of each tenant wrap a new seed.
   */
  async checkStatus(): Promise<KmsHealth> {
    const { metrics, apiServerIdHash } = this.deps;
    try {
      const s = await this.client.status();
      if (s.healthz !== 'ok') throw new Error(`got unexpected healthz status: ${s.healthz}`);
      if (s.version !== 'v2' && s.version !== 'v2beta1') throw new Error(`expected KMSv2 API version v2, got ${s.version}`);
      if (s.key_id === '') {
        metrics.invalidKeyIdFromStatus.inc({ provider_name: this.name, error: 'empty' });
        throw new Error('got invalid KMSv2 KeyID hash "": keyID is empty');
      }
      if (this.health.keyId !== '' && s.key_id !== this.health.keyId) {
        this.deps.logger.info({ provider: this.name, keyIdHash: keyIdHash(s.key_id) }, 'KMS v2 plugin reported a new key_id: new writes wrap new data keys');
      }
      if (!this.health.healthy) this.deps.logger.info({ provider: this.name }, 'KMS v2 plugin is healthy');
      this.health = { healthy: true, keyId: s.key_id };
      metrics.keyIdHashStatusLast.set({ provider_name: this.name, key_id_hash: keyIdHash(s.key_id), apiserver_id_hash: apiServerIdHash }, Date.now() / 1000);
    } catch (err) {
      const error = `failed to perform status section of the healthz check for KMS Provider ${this.name}, error: ${(err as Error).message}`;
      if (this.health.healthy) this.deps.logger.error({ provider: this.name, err: (err as Error).message }, 'KMS v2 plugin is unhealthy: writes of encrypted resources are refused');
      this.health = { healthy: false, keyId: this.health.keyId, error };
    }
    return this.health;
  }

  toStorage(data: Buffer, aad: Buffer, ctx?: TransformContext): Buffer {
    if (!ctx) throw new Error(`KMS provider ${this.name}: the tenant of the value is required`);
    const h = this.health;
    if (!h.healthy) throw new StorageError('Unavailable', `the KMS provider ${this.name} is unavailable; retry the request`);
    const w = this.writeKeys.get(ctx.tenant);
    if (!w || w.keyId !== h.keyId || w.expires < Date.now()) {
      throw new DataKeyNeeded(`the data key of tenant ${ctx.tenant} is being loaded; retry the request`, this.once(`w:${ctx.tenant}`, () => this.loadWriteKey(ctx.tenant)));
    }
    const encryptedData = w.transformer.toStorage(data, aad);
    w.count();
    this.lastWritten = { keyID: w.keyId, ref: w.ref };
    return encodeEncryptedObject({
      encryptedData,
      keyID: w.keyId,
      encryptedDEKSource: Buffer.from(REF_PREFIX + w.ref),
      annotations: {},
      encryptedDEKSourceType: DEK_SOURCE_HKDF_SHA256_XNONCE_AES_GCM_SEED,
    });
  }

  fromStorage(data: Buffer, aad: Buffer): ReadValue {
    const o = decodeEncryptedObject(data);
    const ref = refOf(o.encryptedDEKSource, o.encryptedDEKSourceType);
    const t = this.seeds.get(ref);
    if (!t) {
      const gone = this.erased.get(ref);
      if (gone) throw new Error(gone);
      this.deps.metrics.cacheMisses.inc();
      throw new DataKeyNeeded(`the data key of this object is being loaded; retry the request`, this.once(`r:${ref}`, () => this.loadReadKey(ref)));
    }
    const read = t.fromStorage(o.encryptedData, aad);
    // Upstream: a value written under another key_id than the current one is stale (rewritten on update).
    return { data: read.data, stale: o.keyID !== this.health.keyId };
  }

  /**
   * What reading `payload` (the bytes after this provider's prefix) needs to
   * know ahead: its key_id and the key-store row of its seed (undefined when
   * the payload is not one this provider wrote; reading it then fails).
   * Pure: decodes only.
   */
  headerOf(payload: Buffer): KmsValueHeader {
    try {
      const o = decodeEncryptedObject(payload);
      let ref: string | undefined;
      try {
        ref = refOf(o.encryptedDEKSource, o.encryptedDEKSourceType);
      } catch {
        ref = undefined;
      }
      return { keyID: o.keyID, ref };
    } catch {
      return { keyID: undefined, ref: undefined };
    }
  }

  /** The header of the value {@link toStorage} returned last (undefined before any); read it synchronously after the write. */
  writtenHeader(): KmsValueHeader | undefined {
    return this.lastWritten;
  }

  /** A promise when reading a value whose seed is the key-store row `ref` needs that seed, not in memory; else undefined. */
  prepareRead(ref: string | undefined): Promise<void> | undefined {
    if (ref === undefined || this.seeds.has(ref) || this.erased.has(ref)) return undefined;
    return this.once(`r:${ref}`, () => this.loadReadKey(ref));
  }

  /** True when a value with `keyID` would be read as stale (written under another key_id than the current one). */
  isStaleKeyId(keyID: string): boolean {
    return keyID !== this.health.keyId;
  }

  /**
   * Forgets every seed this process holds of the tenant, for reads and for
   * writes, of every key generation (the tenant was deleted: its keys are
   * destroyed in the key store, and a new tenant of its name must wrap new ones).
   */
  forgetTenant(tenant: string): void {
    const w = this.writeKeys.get(tenant);
    this.writeKeys.delete(tenant);
    if (w) this.seeds.delete(w.ref);
    for (const [ref, owner] of [...this.seedTenants]) if (owner === tenant) this.seeds.delete(ref);
    this.deps.metrics.dekSourceCacheSize.set({ provider_name: this.name }, this.seeds.size);
  }

  private once(id: string, load: () => Promise<void>): Promise<void> {
    let p = this.loading.get(id);
    if (!p) {
      p = load().finally(() => this.loading.delete(id));
      this.loading.set(id, p);
    }
    return p;
  }

  /** Finds (or creates and wraps) the tenant's seed for the current key_id and keeps it for writes. */
  private async loadWriteKey(tenant: string): Promise<void> {
    const keyId = this.health.keyId;
    if (!this.health.healthy) throw new StorageError('Unavailable', `the KMS provider ${this.name} is unavailable; retry the request`);
    let row = await this.keyStore((s) => s.current(tenant, keyId));
    let transformer: HkdfGcmTransformer | undefined;
    if (!row) {
      const seed = randomBytes(HKDF_SEED_SIZE);
      const wrapped = await this.kms('encrypt', () => this.client.encrypt(seed, randomUUID()));
      row = await this.keyStore((s) => s.add({ tenant, keyId: wrapped.key_id || keyId, wrapped: wrapped.ciphertext, annotations: wrapped.annotations ?? {} }));
      // Another replica may have stored its own seed first: use the stored one.
      if (row.wrapped.equals(wrapped.ciphertext)) transformer = new HkdfGcmTransformer(seed);
    }
    transformer ??= this.seeds.get(row.ref) ?? (await this.unwrap(row));
    this.seeds.set(row.ref, transformer);
    this.seedTenants.set(row.ref, tenant);
    this.writeKeys.set(tenant, { ref: row.ref, keyId: row.keyId, transformer, expires: Date.now() + WRITE_KEY_TTL_MS, count: this.keyIdUse('to_storage', row.keyId) });
    this.deps.metrics.dekSourceCacheSize.set({ provider_name: this.name }, this.seeds.size);
  }

  /** Fetches the seed an object names; a row gone from the key store marks the object crypto-erased. */
  private async loadReadKey(ref: string): Promise<void> {
    const row = await this.keyStore((s) => s.byRef(ref));
    if (!row) {
      const message = `failed to decrypt DEK, error: data key ${ref} is not in the key store: its tenant was deleted (crypto-erasure), or this key store is not the one the object was written with`;
      this.erased.set(ref, message);
      throw new StorageError('Internal', message);
    }
    this.seeds.set(ref, await this.unwrap(row));
    this.seedTenants.set(ref, row.tenant);
    this.deps.metrics.dekSourceCacheSize.set({ provider_name: this.name }, this.seeds.size);
  }

  private async unwrap(row: TenantDataKey): Promise<HkdfGcmTransformer> {
    const seed = await this.kms('decrypt', () => this.client.decrypt({ ciphertext: row.wrapped, uid: randomUUID(), key_id: row.keyId, annotations: row.annotations }));
    this.keyIdUse('from_storage', row.keyId)();
    return new HkdfGcmTransformer(seed);
  }

  /** Records one use of `keyId` (upstream's key_id_hash_total and its last timestamp), labels resolved once. */
  private keyIdUse(type: 'to_storage' | 'from_storage', keyId: string): () => void {
    const labels = { transformation_type: type, provider_name: this.name, key_id_hash: keyIdHash(keyId), apiserver_id_hash: this.deps.apiServerIdHash };
    const total = this.deps.metrics.keyIdHashTotal.labels(labels);
    const last = this.deps.metrics.keyIdHashLast.labels(labels);
    return () => {
      total.inc();
      last.set(Date.now() / 1000);
    };
  }

  private async kms<T>(op: 'encrypt' | 'decrypt', call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (err) {
      throw new StorageError('Unavailable', `the KMS provider ${this.name} is unavailable (failed to ${op} DEK, error: ${(err as Error).message}); retry the request`);
    }
  }

  private async keyStore<T>(run: (s: TenantKeyStore) => Promise<T>): Promise<T> {
    try {
      return await run(this.deps.keyStore);
    } catch (err) {
      if (err instanceof StorageError) throw err;
      this.deps.logger.error({ provider: this.name, err: (err as Error).message }, 'key store unavailable');
      throw new StorageError('Unavailable', 'the key store of the tenants\' data keys is unavailable; retry the request');
    }
  }
}

/** The key store row an EncryptedObject names. Throws for objects this provider did not write. */
function refOf(source: Buffer, type: number): string {
  const s = source.toString();
  if (type !== DEK_SOURCE_HKDF_SHA256_XNONCE_AES_GCM_SEED || !s.startsWith(REF_PREFIX)) {
    throw new Error('failed to decrypt DEK, error: the encrypted DEK source does not name a tenant data key of this server');
  }
  return s.slice(REF_PREFIX.length);
}
