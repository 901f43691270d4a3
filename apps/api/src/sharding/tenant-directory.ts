import { LRUCache } from 'lru-cache';
import { DEFAULT_SHARD } from '@plinth/storage';
import { isPlainObject, type KubeObject } from '@plinth/apimachinery';
import { PLATFORM_TENANT } from '../kinds/tenant/tenant-api.js';

/** How long a tenant that has no Tenant object is remembered as absent (a flood of made-up names costs one read each per TTL). */
const ABSENT_TTL_MS = 1000;
const MAX_ABSENT = 10_000;

/** Reads one Tenant object from the platform's database (the default shard); undefined when there is none. */
export type TenantObjectReader = (name: string) => Promise<KubeObject | undefined>;

/** Where a tenant lives: its shard, and the revision from which its changes are live there (0: always were). */
export interface Placement {
  shard: string;
  since: number;
}

/**
 * Where a Tenant object says its tenant lives: `status.shard` (else the
 * default shard), and `status.shardResourceVersion`, the revision a move
 * switched it there at (below it, the shard holds only copies). Pure.
 */
export function placementOfTenantObject(t: KubeObject | undefined): Placement {
  const status = t && isPlainObject(t.status) ? t.status : {};
  const shard = typeof status.shard === 'string' && status.shard !== '' ? status.shard : DEFAULT_SHARD;
  const since = typeof status.shardResourceVersion === 'string' && /^\d+$/.test(status.shardResourceVersion) ? Number(status.shardResourceVersion) : 0;
  return { shard, since };
}

const HOME: Placement = { shard: DEFAULT_SHARD, since: 0 };

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
  private readonly homes = new Map<string, Placement>();
  private readonly absent = new LRUCache<string, true>({ max: MAX_ABSENT, ttl: ABSENT_TTL_MS });
  private readonly listeners = new Set<(tenant: string, from: string, to: string) => void>();
  /** The uid of each known Tenant object, and whether its deletion has been seen (its retirement told). */
  private readonly lives = new Map<string, { uid: string; retired: boolean }>();
  private readonly retirementListeners = new Set<(tenant: string) => void>();

  constructor(private readonly read: TenantObjectReader) {}

  /** The shard of `tenant` when known without a read (the platform tenant, a cached answer); undefined otherwise. */
  peek(tenant: string): string | undefined {
    if (tenant === PLATFORM_TENANT) return DEFAULT_SHARD;
    return this.homes.get(tenant)?.shard ?? (this.absent.get(tenant) ? DEFAULT_SHARD : undefined);
  }

  /** Where `tenant` lives as far as this replica knows now (the default shard when unknown). */
  placement(tenant: string): Placement {
    return this.homes.get(tenant) ?? HOME;
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
    this.observeLife(tenant, object);
    const placement = placementOfTenantObject(object);
    this.set(tenant, placement);
    return placement.shard;
  }

  /** Records a change of a Tenant object (from the change stream, or this replica's own write). */
  apply(type: 'ADDED' | 'MODIFIED' | 'DELETED', object: KubeObject): void {
    const name = object.metadata?.name;
    if (!name || name === PLATFORM_TENANT) return;
    if (type === 'DELETED') {
      this.retire(name);
      this.lives.delete(name);
      this.forget(name);
      return;
    }
    this.observeLife(name, object);
    this.set(name, placementOfTenantObject(object));
  }

  /**
   * Records every Tenant object there is now (a reload after the change
   * stream had a hole): tenants known before and absent now, or present
   * under another uid, were deleted meanwhile and are retired.
   */
  replaceAll(objects: KubeObject[]): void {
    const present = new Set(objects.map((o) => o.metadata?.name).filter((n): n is string => typeof n === 'string'));
    for (const name of [...this.lives.keys()]) if (!present.has(name)) this.apply('DELETED', { metadata: { name } } as KubeObject);
    for (const o of objects) this.apply('ADDED', o);
  }

  /**
   * Calls `listener(tenant)` when this replica learns that a tenant is being
   * deleted or is gone: its Tenant object got a deletionTimestamp, was
   * deleted, or came back with another uid (a new tenant of the same name,
   * whatever this replica missed). Told at most once per Tenant object's
   * life and once more at its removal; in the change stream's order. Returns
   * the unsubscribe function.
   */
  onRetired(listener: (tenant: string) => void): () => void {
    this.retirementListeners.add(listener);
    return () => this.retirementListeners.delete(listener);
  }

  private observeLife(name: string, object: KubeObject): void {
    const uid = typeof object.metadata?.uid === 'string' ? object.metadata.uid : '';
    const known = this.lives.get(name);
    if (known && known.uid !== uid) {
      // Another life under the same name: whatever this replica kept of the old one goes first.
      if (!known.retired) this.retire(name);
      this.lives.delete(name);
    }
    const life = this.lives.get(name) ?? { uid, retired: false };
    this.lives.set(name, life);
    if (object.metadata?.deletionTimestamp && !life.retired) {
      life.retired = true;
      this.retire(name);
    }
  }

  private retire(name: string): void {
    for (const l of this.retirementListeners) l(name);
  }

  /** Records where `tenant` lives now; tells the listeners when its shard changed. */
  set(tenant: string, placement: Placement): void {
    this.absent.delete(tenant);
    const before = this.homes.get(tenant);
    this.homes.set(tenant, placement);
    if (before !== undefined && before.shard !== placement.shard) for (const l of this.listeners) l(tenant, before.shard, placement.shard);
  }

  /** Forgets `tenant` (its Tenant object is gone). */
  forget(tenant: string): void {
    this.homes.delete(tenant);
  }

  /** The tenants known to live on `shard` (from the loaded directory). */
  tenantsOn(shard: string): string[] {
    return [...this.homes].filter(([, p]) => p.shard === shard).map(([t]) => t);
  }

  /** Calls `listener(tenant, from, to)` whenever a tenant's shard changes (a move switched); returns the unsubscribe function. */
  onMove(listener: (tenant: string, from: string, to: string) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
