import { ALL, compactString, type PolicyRule } from './policy-rule.js';

/** Above this many broken-down rules a coverage check gives up (a hostile role must not cost unbounded CPU). */
export const MAX_BROKEN_DOWN_RULES = 100_000;

const rule = (p: Partial<PolicyRule>): PolicyRule => ({ verbs: [], apiGroups: [], resources: [], resourceNames: [], nonResourceURLs: [], ...p });

/** How many single-permission rules {@link breakdownRule} makes of `r`, without making them. */
export function breakdownSize(r: PolicyRule): number {
  const names = Math.max(r.resourceNames.length, 1);
  return r.apiGroups.length * r.resources.length * r.verbs.length * names + r.nonResourceURLs.length * r.verbs.length;
}

/** Upstream's BreakdownRule: one rule per (group, resource, verb[, name]) and per (URL, verb). Pure. */
export function breakdownRule(r: PolicyRule): PolicyRule[] {
  const out: PolicyRule[] = [];
  for (const g of r.apiGroups) {
    for (const res of r.resources) {
      for (const v of r.verbs) {
        if (r.resourceNames.length > 0) {
          for (const n of r.resourceNames) out.push(rule({ apiGroups: [g], resources: [res], verbs: [v], resourceNames: [n] }));
        } else out.push(rule({ apiGroups: [g], resources: [res], verbs: [v] }));
      }
    }
  }
  for (const u of r.nonResourceURLs) for (const v of r.verbs) out.push(rule({ nonResourceURLs: [u], verbs: [v] }));
  return out;
}

const hasAll = (set: string[], contains: string[]): boolean => contains.every((c) => set.includes(c));

function resourceCoversAll(set: string[], covers: string[]): boolean {
  if (set.includes(ALL) || hasAll(set, covers)) return true;
  for (const path of covers) {
    if (set.includes(path)) continue;
    const slash = path.indexOf('/');
    if (slash < 0) return false;
    if (!set.includes(`*/${path.slice(slash + 1)}`)) return false;
  }
  return true;
}

function nonResourceURLCovers(owner: string, sub: string): boolean {
  if (owner === sub) return true;
  return owner.endsWith('*') && sub.startsWith(owner.replace(/\*+$/, ''));
}

function nonResourceURLsCoverAll(set: string[], covers: string[]): boolean {
  return covers.every((p) => set.some((o) => nonResourceURLCovers(o, p)));
}

/** Upstream's ruleCovers: whether `owner` grants everything the single-permission `sub` grants. */
export function ruleCovers(owner: PolicyRule, sub: PolicyRule): boolean {
  const verbs = owner.verbs.includes(ALL) || hasAll(owner.verbs, sub.verbs);
  const groups = owner.apiGroups.includes(ALL) || hasAll(owner.apiGroups, sub.apiGroups);
  const resources = resourceCoversAll(owner.resources, sub.resources);
  const urls = nonResourceURLsCoverAll(owner.nonResourceURLs, sub.nonResourceURLs);
  const names =
    sub.resourceNames.length === 0 ? owner.resourceNames.length === 0 : owner.resourceNames.length === 0 || hasAll(owner.resourceNames, sub.resourceNames);
  return verbs && groups && resources && names && urls;
}

/** The outcome of {@link covers}. */
export interface CoverResult {
  covered: boolean;
  /** The single-permission rules `owner` lacks (empty when covered). */
  missing: PolicyRule[];
  /** Set when the check gave up because `servant` breaks down into too many rules. */
  tooLarge?: boolean;
}

/**
 * Upstream's Covers: whether `owner` rules grant every permission of
 * `servant` rules. Gives up (not covered, `tooLarge`) above
 * {@link MAX_BROKEN_DOWN_RULES}. Pure.
 */
export function covers(owner: PolicyRule[], servant: PolicyRule[]): CoverResult {
  const total = servant.reduce((n, r) => n + breakdownSize(r), 0);
  if (total > MAX_BROKEN_DOWN_RULES) return { covered: false, missing: [], tooLarge: true };
  const missing: PolicyRule[] = [];
  for (const s of servant) {
    for (const sub of breakdownRule(s)) if (!owner.some((o) => ruleCovers(o, sub))) missing.push(sub);
  }
  return { covered: missing.length === 0, missing };
}

/** Upstream's CompactRules: simple one-group, one-resource rules with the same name merge their verbs. Pure. */
export function compactRules(rules: PolicyRule[]): PolicyRule[] {
  const out: PolicyRule[] = [];
  const simple = new Map<string, PolicyRule>();
  for (const r of rules) {
    const isSimple = r.resourceNames.length <= 1 && r.nonResourceURLs.length === 0 && r.apiGroups.length === 1 && r.resources.length === 1;
    if (!isSimple) {
      out.push(r);
      continue;
    }
    const key = JSON.stringify([r.apiGroups[0], r.resources[0], r.resourceNames.length > 0, r.resourceNames[0] ?? '']);
    const existing = simple.get(key);
    if (!existing) simple.set(key, { ...r, verbs: [...r.verbs] });
    else for (const v of r.verbs) if (!existing.verbs.includes(v)) existing.verbs.push(v);
  }
  return [...out, ...simple.values()];
}

/** The sorted, de-duplicated compact descriptions of `missing`, one per line, as upstream's escalation message lists them. */
export function describeMissing(missing: PolicyRule[]): string {
  return [...new Set(compactRules(missing).map(compactString))].sort().join('\n');
}
