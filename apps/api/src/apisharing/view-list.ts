import type { KubeObject } from '@plinth/apimachinery';
import { type ListQuery, type Storage, withResourceVersion } from '@plinth/storage';

/** What one list (or one page) of the provider's view reads. */
export interface ViewListQuery extends Pick<ListQuery, 'resource' | 'namespace' | 'labelRequirements' | 'fieldRequirements' | 'filter'> {
  /** The binding tenants addressed, in name order (the order of the list). */
  tenants: string[];
  shardOf(tenant: string): string;
  /** The snapshot: each shard read at its revision here. */
  revisions: ReadonlyMap<string, number>;
  /** What else selects `tenant`'s objects (a permission claim's selector); unset: every object. */
  select?: (tenant: string, obj: KubeObject) => boolean;
  /** At most this many items; 0 reads everything. */
  limit: number;
  /** Where a page continues: the tenant (later tenants follow) and the last key of it already returned. */
  from?: { tenant: string; after?: { namespace: string; name: string } };
}

/** One object of the view's list, as stored, with where it comes from. */
export interface ViewListItem {
  tenant: string;
  shard: string;
  /** Its revision on its shard (its own resourceVersion there). */
  revision: number;
  obj: KubeObject;
}

const PAGE = 500;

/**
 * Reads the view's objects in tenant-name order, then key order within a
 * tenant (namespace, name), each tenant at its shard's revision of the
 * snapshot, up to `limit` items. Returns `next` when more may follow (the
 * tenant to continue in, and the last key returned of it). Throws
 * StorageError Expired when a shard's revision is compacted away, and
 * Unavailable when a shard does not answer. Reads only; never mutates.
 */
export async function readView(lists: Storage, q: ViewListQuery): Promise<{ items: ViewListItem[]; next?: { tenant: string; after?: { namespace: string; name: string } } }> {
  const items: ViewListItem[] = [];
  const tenants = q.from ? q.tenants.filter((t) => t >= q.from!.tenant) : q.tenants;
  for (const [i, tenant] of tenants.entries()) {
    const shard = q.shardOf(tenant);
    let after = q.from && tenant === q.from.tenant ? q.from.after : undefined;
    for (;;) {
      const room = q.limit > 0 ? q.limit - items.length : PAGE;
      const page = await lists.list({
        tenant,
        resource: q.resource,
        namespace: q.namespace,
        labelRequirements: q.labelRequirements,
        fieldRequirements: q.fieldRequirements,
        filter: q.select ? (b) => (!q.filter || q.filter(b)) && q.select!(tenant, b as KubeObject) : q.filter,
        atRevision: q.revisions.get(shard),
        limit: Math.min(room, PAGE),
        after,
      });
      for (const item of page.items) items.push({ tenant, shard, revision: item.revision, obj: withResourceVersion(item.body, item.revision) as KubeObject });
      const full = q.limit > 0 && items.length >= q.limit;
      if (page.next && full) return { items, next: { tenant, after: page.next } };
      if (!page.next) break;
      after = page.next;
    }
    if (q.limit > 0 && items.length >= q.limit && i + 1 < tenants.length) return { items, next: { tenant: tenants[i + 1] } };
  }
  return { items };
}
