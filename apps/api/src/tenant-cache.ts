import type { TenantRepository } from '../../../libs/storage/src/index.js';

const TTL_MS = 2000;

/**
 * Caches tenant existence for a short time so that every request does not
 * query the tenants table. A new tenant is visible within TTL_MS.
 */
export class TenantCache {
  private readonly known = new Map<string, { exists: boolean; at: number }>();

  constructor(private readonly tenants: TenantRepository) {}

  /** True when the tenant exists (possibly up to TTL_MS stale). */
  async exists(name: string): Promise<boolean> {
    const hit = this.known.get(name);
    const now = Date.now();
    if (hit && now - hit.at < TTL_MS) return hit.exists;
    const exists = await this.tenants.exists(name);
    this.known.set(name, { exists, at: now });
    if (this.known.size > 10000) this.known.clear();
    return exists;
  }
}
