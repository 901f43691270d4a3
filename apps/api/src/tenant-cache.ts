import { LRUCache } from 'lru-cache';
import type { TenantRepository } from '@plinth/storage';

const TTL_MS = 2000;
const MAX_TENANTS = 10_000;

/**
 * Caches tenant existence for a short time so that every request does not
 * query the tenants table. A new tenant is visible within TTL_MS. At most
 * MAX_TENANTS answers are kept (least recently used go first), so a flood
 * of made-up tenant names cannot grow it.
 */
export class TenantCache {
  private readonly known = new LRUCache<string, boolean>({ max: MAX_TENANTS, ttl: TTL_MS });

  constructor(private readonly tenants: Pick<TenantRepository, 'exists'>) {}

  /** True when the tenant exists (possibly up to TTL_MS stale). */
  async exists(name: string): Promise<boolean> {
    const hit = this.known.get(name);
    if (hit !== undefined) return hit;
    const exists = await this.tenants.exists(name);
    this.known.set(name, exists);
    return exists;
  }

  /** How many answers are cached (never more than MAX_TENANTS). */
  get size(): number {
    return this.known.size;
  }
}
