import { LRUCache } from 'lru-cache';
import type { TenantRecord, TenantRepository } from '@plinth/storage';

const TTL_MS = 2000;
const MAX_TENANTS = 10_000;

/**
 * Caches tenant rows for a short time so that every request does not query
 * the tenants table. A new tenant, or a tenant's new phase, is visible
 * within TTL_MS (at once on the replica that called `forget`). At most
 * MAX_TENANTS answers are kept (least recently used go first), so a flood
 * of made-up tenant names cannot grow it. Storage refuses writes to a
 * tenant that is not Active whatever this cache says.
 */
export class TenantCache {
  private readonly known = new LRUCache<string, { record: TenantRecord | undefined }>({ max: MAX_TENANTS, ttl: TTL_MS });

  constructor(private readonly tenants: Pick<TenantRepository, 'get'>) {}

  /** True when the tenant exists, whatever its phase (possibly up to TTL_MS stale). */
  async exists(name: string): Promise<boolean> {
    return (await this.get(name)) !== undefined;
  }

  /** The tenant's row, or undefined when it does not exist (possibly up to TTL_MS stale). */
  async get(name: string): Promise<TenantRecord | undefined> {
    const hit = this.known.get(name);
    if (hit !== undefined) return hit.record;
    const record = await this.tenants.get(name);
    this.known.set(name, { record });
    return record;
  }

  /** The tenant's row as cached now, without reading: `null` when it is known not to exist, undefined when nothing (fresh) is cached. */
  peek(name: string): TenantRecord | null | undefined {
    const hit = this.known.get(name);
    return hit === undefined ? undefined : (hit.record ?? null);
  }

  /** Drops what is cached about `name` (after this replica changed it, or learned of its deletion). */
  forget(name: string): void {
    this.known.delete(name);
  }

  /** How many answers are cached (never more than MAX_TENANTS). */
  get size(): number {
    return this.known.size;
  }
}
