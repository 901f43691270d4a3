import { type RawBuilder, sql } from 'kysely';
import type { LabelRequirementLike } from './selector-sql.js';

/**
 * The element one state of every change a selector with `requirements`
 * can match carries in its `labels` (migration 0018): its scope
 * ("<tenant> <resource>") and the equality terms (`=`, `==`, and `in` with
 * a single value). Undefined when there are none (the index cannot narrow
 * the read). Pure.
 */
export function labelContainment(tenant: string, resource: string, requirements: LabelRequirementLike[]): { s: string; l: Record<string, string> } | undefined {
  const out: Record<string, string> = {};
  let any = false;
  for (const r of requirements) {
    const single = r.operator === 'Equals' || r.operator === 'DoubleEquals' || (r.operator === 'In' && r.values.length === 1);
    if (!single) continue;
    // Two different values required for one key: nothing can match, but the watch's own filter says so; keep the first.
    if (r.key in out) continue;
    out[r.key] = r.values[0];
    any = true;
  }
  return any ? { s: `${tenant} ${resource}`, l: out } : undefined;
}

/**
 * True when every change of `tenant` after `after` carries its labels
 * (migration 0018): the catch-up starts at or above the first revision
 * written with the index, and above the copies of the tenant's history a
 * move brought (which have none).
 */
export function labelIndexCovers(tenant: string, after: number): RawBuilder<boolean> {
  return sql<boolean>`(${after}::bigint + 1 >= greatest(
    (SELECT l.from_revision FROM change_label_index l WHERE l.id = 1),
    coalesce((SELECT t.arrived_revision FROM tenants t WHERE t.name = ${tenant}), 0)))`;
}
