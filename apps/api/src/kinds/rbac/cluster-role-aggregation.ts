import { isDeepStrictEqual } from 'node:util';
import { labelSelectorFromMetav1, matchesLabels } from '@plinth/apimachinery';
import { toPolicyRule } from './policy-rule.js';
import { isPlainObject } from '@plinth/apimachinery';

type Json = Record<string, unknown>;

function metaOf(o: Json): Json {
  return isPlainObject(o.metadata) ? o.metadata : {};
}

/** The label selectors of a ClusterRole's aggregationRule; undefined when it has none. */
export function aggregationSelectors(role: Json): Json[] | undefined {
  if (!isPlainObject(role.aggregationRule)) return undefined;
  const sels = role.aggregationRule.clusterRoleSelectors;
  return Array.isArray(sels) ? sels.filter(isPlainObject) : [];
}

function selects(selector: Json, role: Json): boolean {
  try {
    const labels = metaOf(role).labels;
    return matchesLabels(labelSelectorFromMetav1(selector as never), isPlainObject(labels) ? (labels as Record<string, string>) : {});
  } catch {
    // An invalid selector selects nothing (upstream stops syncing the role).
    return false;
  }
}

const ruleKey = (rule: unknown) => toPolicyRule(rule);

/**
 * Upstream's aggregation of one ClusterRole: for each selector in order,
 * the rules of every other ClusterRole it selects (sorted by name), each
 * distinct rule once. Returns the rules as stored in the source roles, or
 * undefined when `target` has no aggregationRule. Pure.
 */
export function aggregatedRules(target: Json, all: Json[]): unknown[] | undefined {
  const selectors = aggregationSelectors(target);
  if (!selectors) return undefined;
  const name = metaOf(target).name;
  const byName = [...all].sort((a, b) => {
    const x = String(metaOf(a).name);
    const y = String(metaOf(b).name);
    return x < y ? -1 : x > y ? 1 : 0;
  });
  const out: unknown[] = [];
  const seen: ReturnType<typeof ruleKey>[] = [];
  for (const sel of selectors) {
    for (const role of byName) {
      if (metaOf(role).name === name || !selects(sel, role)) continue;
      for (const rule of Array.isArray(role.rules) ? role.rules : []) {
        const key = ruleKey(rule);
        if (seen.some((k) => isDeepStrictEqual(k, key))) continue;
        seen.push(key);
        out.push(rule);
      }
    }
  }
  return out;
}

/** Whether `current` (a stored rules value) already equals `next`, nil and empty being equal as in upstream's semantic comparison. */
export function sameRules(current: unknown, next: unknown[]): boolean {
  const cur = Array.isArray(current) ? current : [];
  return cur.length === next.length && cur.every((r, i) => isDeepStrictEqual(toPolicyRule(r), toPolicyRule(next[i])));
}

/**
 * One aggregation pass over a tenant's ClusterRoles: the roles whose
 * aggregated rules differ from their stored rules, with the new rules.
 * Callers apply the updates and repeat until nothing changes (roles
 * aggregated into roles that are aggregated themselves). Pure.
 */
export function aggregationUpdates(all: Json[]): { name: string; rules: unknown[] }[] {
  const updates: { name: string; rules: unknown[] }[] = [];
  for (const role of all) {
    const rules = aggregatedRules(role, all);
    if (rules && !sameRules(role.rules, rules)) updates.push({ name: String(metaOf(role).name), rules });
  }
  return updates;
}
