import { statSync } from 'node:fs';
import type { TenantKeyStore } from '@plinth/storage';
import { type KmsConfiguration, socketPath } from './kms-config.js';
import { type KmsProviderDeps, KmsV2Provider } from './kms-v2.provider.js';

/**
 * The KMS v2 providers of the process, across configuration reloads: a
 * provider whose name, endpoint and timeout are unchanged is kept (with its
 * cached seeds and its health), new ones are started, and those no
 * configuration in force uses are stopped.
 */
export class KmsRegistry {
  private readonly providers = new Map<string, KmsV2Provider>();
  private readonly started = new Set<KmsV2Provider>();

  constructor(private readonly deps: Omit<KmsProviderDeps, 'keyStore'> & { keyStore?: TenantKeyStore }) {}

  /** The key store (undefined when no kms provider was configured at start-up). */
  get keyStore(): TenantKeyStore | undefined {
    return this.deps.keyStore;
  }

  /**
   * The provider of a validated v2 configuration, created (not started) when
   * new. Throws when its socket does not exist or no key store is open.
   */
  provider(c: KmsConfiguration): KmsV2Provider {
    const id = `${c.name}\u0000${c.endpoint}\u0000${c.timeoutMs}`;
    const known = this.providers.get(id);
    if (known) return known;
    const keyStore = this.deps.keyStore;
    if (!keyStore) throw new Error(`kms provider ${c.name}: the tenants' key store opens at start-up only when a kms provider is configured then; restart the server`);
    const path = socketPath(c.endpoint);
    // An abstract socket (`unix://@name`) has no file to check.
    if (!path.startsWith('@')) {
      let isSocket = false;
      try {
        isSocket = statSync(path).isSocket();
      } catch (err) {
        throw new Error(`kms provider ${c.name}: endpoint ${c.endpoint}: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such socket (is the KMS plugin running?)' : (err as Error).message}`);
      }
      if (!isSocket) throw new Error(`kms provider ${c.name}: endpoint ${c.endpoint}: not a unix socket`);
    }
    const p = new KmsV2Provider(c.name, c.endpoint, c.timeoutMs, { ...this.deps, keyStore });
    this.providers.set(id, p);
    return p;
  }

  /** Starts the providers not yet started (a first Status call each), and stops every provider not in `inUse`. */
  async settle(inUse: KmsV2Provider[]): Promise<void> {
    const used = new Set(inUse);
    for (const [id, p] of this.providers) {
      if (!used.has(p)) {
        p.stop();
        this.providers.delete(id);
        this.started.delete(p);
      }
    }
    const fresh = inUse.filter((p) => !this.started.has(p));
    for (const p of fresh) this.started.add(p);
    await Promise.all(fresh.map((p) => p.start()));
  }

  /** Every provider in force. */
  all(): KmsV2Provider[] {
    return [...this.providers.values()];
  }

  /** Stops every provider and closes the key store. */
  async close(): Promise<void> {
    for (const p of this.providers.values()) p.stop();
    this.providers.clear();
    await this.deps.keyStore?.close();
  }
}
