import { isPlainObject, type KubeObject } from '@plinth/apimachinery';

/** One v1 NamespaceCondition. */
export interface NamespaceCondition {
  type: string;
  status: 'True' | 'False';
  lastTransitionTime: string;
  reason: string;
  message: string;
}

/** What one pass of the namespace controller found while emptying a namespace. */
export interface ContentDeletionResult {
  /** Why listing the namespace's kinds failed (never, while every kind is served in process). */
  discoveryError?: string;
  /** One message per kind whose content could not be deleted. */
  contentErrors: string[];
  /** Objects left, by `resource.group` (core kinds end in a dot, as upstream prints them). */
  remainingByResource: Map<string, number>;
  /** Objects left, by the finalizer they wait for. */
  remainingByFinalizer: Map<string, number>;
}

/** The condition types the namespace controller maintains, in upstream's order. */
const CONDITION_TYPES = [
  'NamespaceDeletionDiscoveryFailure',
  'NamespaceDeletionGroupVersionParsingFailure',
  'NamespaceDeletionContentFailure',
  'NamespaceContentRemaining',
  'NamespaceFinalizersRemaining',
] as const;

const OK: Record<(typeof CONDITION_TYPES)[number], { reason: string; message: string }> = {
  NamespaceDeletionDiscoveryFailure: { reason: 'ResourcesDiscovered', message: 'All resources successfully discovered' },
  NamespaceDeletionGroupVersionParsingFailure: { reason: 'ParsedGroupVersions', message: 'All legacy kube types successfully parsed' },
  NamespaceDeletionContentFailure: { reason: 'ContentDeleted', message: 'All content successfully deleted, may be waiting on finalization' },
  NamespaceContentRemaining: { reason: 'ContentRemoved', message: 'All content successfully removed' },
  NamespaceFinalizersRemaining: { reason: 'ContentRemoved', message: 'All content successfully removed' },
};

/** `a in 2 resource instances`-style parts, sorted (upstream sorts for stable updates). */
function describeCounts(counts: Map<string, number>, phrase: (key: string, n: number) => string): string {
  return [...counts].filter(([, n]) => n > 0).map(([k, n]) => phrase(k, n)).sort().join(', ');
}

/** The failing conditions a pass calls for, by type (upstream's reasons and messages). */
function failingConditions(result: ContentDeletionResult): Map<string, { reason: string; message: string }> {
  const failing = new Map<string, { reason: string; message: string }>();
  if (result.discoveryError !== undefined) failing.set('NamespaceDeletionDiscoveryFailure', { reason: 'DiscoveryFailed', message: result.discoveryError });
  if (result.contentErrors.length > 0) {
    const msgs = [...result.contentErrors].sort().join(', ');
    failing.set('NamespaceDeletionContentFailure', { reason: 'ContentDeletionFailed', message: `Failed to delete all resource types, ${result.contentErrors.length} remaining: ${msgs}` });
  }
  if (result.remainingByResource.size > 0) {
    const parts = describeCounts(result.remainingByResource, (r, n) => `${r} has ${n} resource instances`);
    failing.set('NamespaceContentRemaining', { reason: 'SomeResourcesRemain', message: `Some resources are remaining: ${parts}` });
  }
  if (result.remainingByFinalizer.size > 0) {
    const parts = describeCounts(result.remainingByFinalizer, (f, n) => `${f} in ${n} resource instances`);
    failing.set('NamespaceFinalizersRemaining', { reason: 'SomeFinalizerRemain', message: `Some finalizers are remaining: ${parts}` });
  }
  return failing;
}

function conditionsOf(ns: KubeObject): NamespaceCondition[] {
  const list = isPlainObject(ns.status) ? ns.status.conditions : undefined;
  return Array.isArray(list) ? (list.filter(isPlainObject) as unknown as NamespaceCondition[]) : [];
}

/**
 * Sets the namespace controller's five conditions on `ns` from one pass's
 * `result`, as upstream's condition updater: a failing condition is True
 * with its reason and message, every other one False with its "ok"
 * variant; lastTransitionTime changes only when the status does; other
 * conditions are kept. Mutates `ns.status`; returns whether anything changed.
 */
export function applyNamespaceDeletionConditions(ns: KubeObject, result: ContentDeletionResult, now: string): boolean {
  const failing = failingConditions(result);
  const conditions = conditionsOf(ns).map((c) => ({ ...c }));
  let changed = false;
  for (const type of CONDITION_TYPES) {
    const want = failing.get(type);
    const next = { type, status: want ? ('True' as const) : ('False' as const), reason: (want ?? OK[type]).reason, message: (want ?? OK[type]).message };
    const old = conditions.find((c) => c.type === type);
    if (!old) {
      conditions.push({ ...next, lastTransitionTime: now });
      changed = true;
    } else if (old.status !== next.status || old.reason !== next.reason || old.message !== next.message) {
      if (old.status !== next.status) old.lastTransitionTime = now;
      Object.assign(old, next);
      changed = true;
    }
  }
  if (changed) ns.status = { ...(isPlainObject(ns.status) ? ns.status : {}), conditions };
  return changed;
}
