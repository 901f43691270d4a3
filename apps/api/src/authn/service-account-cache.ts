import { LRUCache } from 'lru-cache';
import type { ObserveChanges } from '../watch/observe-changes.js';
import type { ServiceAccountLookup } from './service-account.authenticator.js';

/** ServiceAccounts remembered at most (one small entry each). */
const MAX_ENTRIES = 100_000;

const keyOf = (tenant: string, namespace: string, name: string) => `${tenant}\u0000${namespace}\u0000${name}`;

/**
 * A ServiceAccount lookup that answers from memory, as upstream's token
 * authenticator reads an informer's cache instead of storage: live
 * ServiceAccounts' uids are remembered (LRU) and forgotten as soon as this
 * replica's change stream delivers any change to them (a delete, a
 * deletionTimestamp, a re-creation with a new uid). ServiceAccounts are
 * cached on every replica (the write barrier), so a client whose DELETE of a
 * ServiceAccount was answered finds its tokens refused on this replica at
 * once. A tenant's deletion forgets all of its ServiceAccounts. Misses and
 * absent accounts go to `load` (never remembered).
 */
export function cachedServiceAccountLookup(load: ServiceAccountLookup, observe: ObserveChanges, storageResource: string): ServiceAccountLookup {
  const uids = new LRUCache<string, string>({ max: MAX_ENTRIES });
  // Bumped by every change: a load that began before one may have read what the change replaced, so it is not remembered.
  let epoch = 0;
  observe(storageResource, {
    onChange: (c) => {
      epoch++;
      uids.delete(keyOf(c.key.tenant, c.key.namespace, c.key.name));
    },
    onReset: () => {
      epoch++;
      uids.clear();
    },
    // A deleted tenant's ServiceAccounts are removed without change rows: forget them all, or a new tenant of the same name would accept the old tokens.
    onTenantRetired: (tenant) => {
      epoch++;
      const prefix = `${tenant}\u0000`;
      for (const key of [...uids.keys()]) if (key.startsWith(prefix)) uids.delete(key);
    },
  });
  return async (tenant, namespace, name) => {
    const key = keyOf(tenant, namespace, name);
    const hit = uids.get(key);
    if (hit !== undefined) return hit;
    const started = epoch;
    const uid = await load(tenant, namespace, name);
    if (uid !== undefined && started === epoch) uids.set(key, uid);
    return uid;
  };
}
