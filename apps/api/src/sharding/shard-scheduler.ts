import type { ShardSpecView } from './shard-catalog.js';

/**
 * Where a new tenant goes when its Tenant names no shard: among the shards
 * that are schedulable (not cordoned) and ready on this replica, the one
 * whose tenants' objects take the fewest stored bytes, then the one with
 * the fewest tenants, then by name (so replicas agree). Bytes are what a
 * tenant costs a PostgreSQL server over time (disk, cache, vacuum, backup)
 * and the one figure every write keeps exact (tenant usage); the tenant
 * count breaks ties between empty shards so that new tenants spread
 * instead of piling on the first. Returns undefined when no shard can take
 * one. Pure.
 */
export function pickShard(shards: Array<ShardSpecView & { tenants: number }>, ready: (name: string) => boolean): string | undefined {
  const candidates = shards.filter((s) => !s.unschedulable && ready(s.name));
  candidates.sort((a, b) => a.bytes - b.bytes || a.tenants - b.tenants || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return candidates[0]?.name;
}
