import type { KubeObject } from '@plinth/apimachinery';
import { type ListQuery, type ListResult, type Storage, withResourceVersion } from '@plinth/storage';
import { perShard } from './bounded.js';

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
  /** Tenants of one shard read at once (default 1: one after another); see bounded.ts. */
  perShard?: number;
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

type Key = { namespace: string; name: string };

/**
 * Reads the view's objects in tenant-name order, then key order within a
 * tenant (namespace, name), each tenant at its shard's revision of the
 * snapshot, up to `limit` items. Returns `next` when more may follow (the
 * tenant to continue in, and the last key returned of it). Throws
 * StorageError Expired when a shard's revision is compacted away, and
 * Unavailable when a shard does not answer. Reads only; never mutates.
 *
 * Tenants are read ahead of the one being taken, concurrently: at most
 * `perShard` reads at once on each shard (every statement still addresses
 * one tenant), the first page of the next `perShard` × shards tenants in
 * flight. A paged list reads at most that many tenants it does not return.
 */
export async function readView(lists: Storage, q: ViewListQuery): Promise<{ items: ViewListItem[]; next?: { tenant: string; after?: Key } }> {
  const items: ViewListItem[] = [];
  const tenants = q.from ? q.tenants.filter((t) => t >= q.from!.tenant) : q.tenants;
  const width = Math.max(1, q.perShard ?? 1);
  const gate = perShard(width);
  const ahead = width * Math.max(1, new Set(tenants.map((t) => q.shardOf(t))).size);
  const room = () => (q.limit > 0 ? Math.min(q.limit - items.length, PAGE) : PAGE);
  const page = (tenant: string, limit: number, after: Key | undefined): Promise<ListResult> => {
    const shard = q.shardOf(tenant);
    return gate(shard).run(() =>
      lists.list({
        tenant,
        resource: q.resource,
        namespace: q.namespace,
        labelRequirements: q.labelRequirements,
        fieldRequirements: q.fieldRequirements,
        filter: q.select ? (b) => (!q.filter || q.filter(b)) && q.select!(tenant, b as KubeObject) : q.filter,
        atRevision: q.revisions.get(shard),
        limit,
        after,
      }),
    );
  };
  const first: Promise<ListResult>[] = [];
  const launch = (upTo: number) => {
    for (let n = first.length; n < Math.min(upTo, tenants.length); n++) {
      const tenant = tenants[n];
      const p = page(tenant, room(), q.from && tenant === q.from.tenant ? q.from.after : undefined);
      // Read ahead and maybe never taken (the page filled first): its failure is nobody's.
      p.catch(() => undefined);
      first.push(p);
    }
  };
  for (const [i, tenant] of tenants.entries()) {
    launch(i + 1 + ahead);
    const shard = q.shardOf(tenant);
    let read = await first[i];
    for (;;) {
      // A page read ahead was asked for the room there was then: take what fits now.
      const fits = q.limit > 0 ? q.limit - items.length : read.items.length;
      const taken = read.items.slice(0, fits);
      for (const item of taken) items.push({ tenant, shard, revision: item.revision, obj: withResourceVersion(item.body, item.revision) as KubeObject });
      const full = q.limit > 0 && items.length >= q.limit;
      if (taken.length < read.items.length) {
        const last = taken[taken.length - 1];
        return { items, next: { tenant, after: last ? { namespace: last.key.namespace, name: last.key.name } : undefined } };
      }
      if (read.next && full) return { items, next: { tenant, after: read.next } };
      if (!read.next) break;
      read = await page(tenant, room(), read.next);
    }
    if (q.limit > 0 && items.length >= q.limit && i + 1 < tenants.length) return { items, next: { tenant: tenants[i + 1] } };
  }
  return { items };
}
