import { LRUCache } from 'lru-cache';
import { DEFAULT_SHARD } from '@plinth/storage';
import { isPlainObject, type KubeObject } from '@plinth/apimachinery';
import { PLATFORM_TENANT } from '../kinds/tenant/tenant-api.js';

/** How long a tenant that has no Tenant object is remembered as absent (a flood of made-up names costs one read each per TTL). */
const ABSENT_TTL_MS = 1000;
const MAX_ABSENT = 10_000;

/** Reads one Tenant object from the platform's database (the default shard); undefined when there is none. */
export type TenantObjectReader = (name: string) => Promise<KubeObject | undefined>;

/** The shard a Tenant object says its tenant lives on: `status.shard`, else the default shard. Pure. */
export function shardOfTenantObject(t: KubeObject | undefined): string {
  const shard = t && isPlainObject(t.status) ? t.status.shard : undefined;
  return typeof shard === 'string' && shard !== '' ? shard : DEFAULT_SHARD;
}

/**
 * Where each tenant lives: the Tenant objects (in the platform scope, on
 * the default shard) are the directory, and every replica keeps a copy,
 * loaded at start, kept current by the change stream of Tenant objects
 * ({@link apply}), and completed on a miss by reading the Tenant object
 * (a tenant created on another replica a moment ago). The platform tenant
 * always lives on the default shard. A tenant with no Tenant object is
 * placed on the default shard (where it has no rows either, so it answers
 * 404 as before).
 */
export class TenantDirectory {
  private readonly homes = new Map<string, string>();
  private readonly absent = new LRUCache<string, true>({ max: MAX_ABSENT, ttl: ABSENT_TTL_MS });
  private readonly listeners = new Set<(tenant: string, from: string, to: string) => void>();

  constructor(private readonly read: TenantObjectReader) {}

  /** The shard of `tenant` when known without a read (the platform tenant, a cached answer); undefined otherwise. */
  peek(tenant: string): string | undefined {
    if (tenant === PLATFORM_TENANT) return DEFAULT_SHARD;
    return this.homes.get(tenant) ?? (this.absent.get(tenant) ? DEFAULT_SHARD : undefined);
  }

  /** The shard of `tenant`, reading its Tenant object on a miss. Rejects when the platform's database cannot be read. */
  async shardOf(tenant: string): Promise<string> {
    const known = this.peek(tenant);
    if (known !== undefined) return known;
    return this.refresh(tenant);
  }

  /** Reads `tenant`'s Tenant object again and records where it lives now (after a write was refused as moved). */
  async refresh(tenant: string): Promise<string> {
    if (tenant === PLATFORM_TENANT) return DEFAULT_SHARD;
    const object = await this.read(tenant);
    if (!object) {
      this.forget(tenant);
      this.absent.set(tenant, true);
      return DEFAULT_SHARD;
    }
    const shard = shardOfTenantObject(object);
    this.set(tenant, shard);
    return shard;
  }

  /** Records a change of a Tenant object (from the change stream, or this replica's own write). */
  apply(type: 'ADDED' | 'MODIFIED' | 'DELETED', object: KubeObject): void {
    const name = object.metadata?.name;
    if (!name || name === PLATFORM_TENANT) return;
    if (type === 'DELETED') this.forget(name);
    else this.set(name, shardOfTenantObject(object));
  }

  /** Records that `tenant` lives on `shard` now; tells the listeners when that changed. */
  set(tenant: string, shard: string): void {
    this.absent.delete(tenant);
    const before = this.homes.get(tenant);
    this.homes.set(tenant, shard);
    if (before !== undefined && before !== shard) for (const l of this.listeners) l(tenant, before, shard);
  }

  /** Forgets `tenant` (its Tenant object is gone). */
  forget(tenant: string): void {
    this.homes.delete(tenant);
  }

  /** The tenants known to live on `shard` (from the loaded directory). */
  tenantsOn(shard: string): string[] {
    return [...this.homes].filter(([, s]) => s === shard).map(([t]) => t);
  }

  /** Calls `listener(tenant, from, to)` whenever a tenant's shard changes (a move switched); returns the unsubscribe function. */
  onMove(listener: (tenant: string, from: string, to: string) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
