import { Inject, Injectable } from '@nestjs/common';
import { forgetTenantPlaintexts } from '@plinth/storage';
import { type DynamicEncryption, ENCRYPTION } from './dynamic-encryption.js';

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
