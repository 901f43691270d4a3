import type { AdmissionAttributes, AdmissionModule, AdmissionOperation } from '@plinth/admission';
import { ApiError, fieldErrors, isPlainObject } from '@plinth/apimachinery';
import { DEFAULT_SHARD } from '@plinth/storage';
import { PLATFORM_TENANT, TENANCY_GROUP } from '../kinds/tenant/tenant-api.js';
import type { ShardCatalog } from './shard-catalog.js';
import { pickShard } from './shard-scheduler.js';

/** What placement reads: the Shard objects, each shard's readiness on this replica, and who lives where. */
export interface PlacementView {
  catalog: ShardCatalog;
  ready: (shard: string) => boolean;
  /** The tenants living on `shard` (the directory). */
  tenantsOn: (shard: string) => string[];
}

function specOf(o: Record<string, unknown> | null): Record<string, unknown> {
  return o && isPlainObject(o.spec) ? o.spec : {};
}

function shardField(o: Record<string, unknown> | null): string | undefined {
  const v = specOf(o).shard;
  return typeof v === 'string' && v !== '' ? v : undefined;
}

function statusShard(o: Record<string, unknown> | null): string | undefined {
  const v = o && isPlainObject(o.status) ? o.status.shard : undefined;
  return typeof v === 'string' && v !== '' ? v : undefined;
}

/**
 * Tenant placement, as a scheduler binds pods: a new Tenant that names no
 * shard gets `spec.shard` from {@link pickShard} (mutating); a Tenant that
 * names one, at create or by changing it (a move), must name a Shard that
 * exists (422), is ready and not cordoned (409), and no other move of the
 * tenant may be running (409); an update that leaves `spec.shard` out
 * keeps the current one. A Shard that tenants live on cannot be deleted
 * (409 naming them).
 */
export class TenantPlacementModule implements AdmissionModule {
  static readonly NAME = 'TenantPlacement';
  readonly name = TenantPlacementModule.NAME;

  constructor(private readonly view: PlacementView) {}

  handles(op: AdmissionOperation): boolean {
    return op === 'CREATE' || op === 'UPDATE' || op === 'DELETE';
  }

  async admit(attrs: AdmissionAttributes): Promise<void> {
    if (!this.isTenant(attrs) || !attrs.object || attrs.operation === 'DELETE') return;
    if (shardField(attrs.object)) return;
    const spec = specOf(attrs.object);
    if (attrs.operation === 'UPDATE') {
      const current = shardField(attrs.oldObject) ?? statusShard(attrs.oldObject);
      if (current) attrs.object.spec = { ...spec, shard: current };
      return;
    }
    // Tenants counted from the directory (current on every replica), bytes from the Shards' status (a few seconds old).
    const shards = this.view.catalog.all().map((s) => ({ ...s, tenants: this.view.tenantsOn(s.name).length }));
    const chosen = pickShard(shards, this.view.ready);
    if (!chosen) throw ApiError.conflict(this.target(attrs), 'no shard can take a new tenant: every shard is cordoned or not ready');
    attrs.object.spec = { ...spec, shard: chosen };
  }

  async validate(attrs: AdmissionAttributes): Promise<void> {
    if (this.isShard(attrs) && attrs.operation === 'DELETE') return this.checkShardDeletion(attrs);
    if (!this.isTenant(attrs) || !attrs.object || attrs.operation === 'DELETE') return;
    const wanted = shardField(attrs.object);
    if (!wanted) return;
    if (attrs.operation === 'UPDATE') {
      const from = shardField(attrs.oldObject) ?? statusShard(attrs.oldObject);
      if (wanted === from) return;
      const at = statusShard(attrs.oldObject);
      if (from && at && from !== at) throw ApiError.conflict(this.target(attrs), `a move to shard ${from} is in progress; wait for it to finish`);
      if (isPlainObject(attrs.oldObject?.metadata) && attrs.oldObject.metadata.deletionTimestamp) throw ApiError.conflict(this.target(attrs), 'the tenant is being deleted');
    }
    const shard = this.view.catalog.get(wanted);
    if (!shard) throw ApiError.invalid({ group: TENANCY_GROUP, kind: 'Tenant', name: attrs.name }, [fieldErrors.notFound('spec.shard', wanted)]);
    if (shard.unschedulable) throw ApiError.conflict(this.target(attrs), `shard ${wanted} is cordoned (spec.unschedulable): no tenant may be placed or moved there`);
    if (!this.view.ready(wanted)) throw ApiError.conflict(this.target(attrs), `shard ${wanted} is not ready`);
  }

  private checkShardDeletion(attrs: AdmissionAttributes): void {
    if (attrs.name === DEFAULT_SHARD) throw ApiError.conflict({ group: TENANCY_GROUP, kind: 'shards', name: attrs.name }, 'the default shard is the platform\'s own database and cannot be deleted');
    const living = this.view.tenantsOn(attrs.name);
    if (living.length === 0) return;
    const shown = living.slice(0, 10).join(', ') + (living.length > 10 ? `, and ${living.length - 10} more` : '');
    throw ApiError.conflict({ group: TENANCY_GROUP, kind: 'shards', name: attrs.name }, `tenants live on this shard: ${shown}; move them first`);
  }

  private isTenant(attrs: AdmissionAttributes): boolean {
    return attrs.tenant === PLATFORM_TENANT && attrs.resource.group === TENANCY_GROUP && attrs.resource.resource === 'tenants' && attrs.subresource === '';
  }

  private isShard(attrs: AdmissionAttributes): boolean {
    return attrs.tenant === PLATFORM_TENANT && attrs.resource.group === TENANCY_GROUP && attrs.resource.resource === 'shards' && attrs.subresource === '';
  }

  private target(attrs: AdmissionAttributes) {
    return { group: TENANCY_GROUP, kind: 'tenants', name: attrs.name };
  }
}
