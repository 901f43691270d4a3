import type { CrdRegistry } from './crd-registry.service.js';
import { type CrdNames, type CrdObject, findCondition, isConditionTrue } from '../kinds/customresourcedefinition/crd-types.js';

/**
 * Resolves once this replica's CRD cache shows the CRD `name` of `tenant`
 * settled: gone, terminating, names refused, or Established with the names
 * it asks for (what the controller does right after a create or a names
 * change). Gives up after `timeoutMs`.
 */
export async function crdSettled(cache: CrdRegistry, tenant: string, name: string, timeoutMs = 2000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    await cache.refresh(tenant);
    const crd = cache.crds(tenant).find((c) => c.metadata.name === name);
    if (!crd || isSettled(crd) || Date.now() >= deadline) return;
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Nothing more for the controller to do before the CRD is served as it now is. */
function isSettled(crd: CrdObject): boolean {
  if (crd.metadata.deletionTimestamp) return true;
  const accepted = findCondition(crd, 'NamesAccepted');
  if (!accepted || accepted.status === 'Unknown') return false;
  if (accepted.status === 'False') return true;
  return isConditionTrue(crd, 'Established') && sameNames(crd.spec.names, crd.status?.acceptedNames);
}

function sameNames(want: CrdNames | undefined, got: CrdNames | undefined): boolean {
  const list = (v: string[] | undefined) => JSON.stringify([...(v ?? [])].sort());
  return (
    !!want &&
    !!got &&
    want.plural === got.plural &&
    want.kind === got.kind &&
    (!want.singular || want.singular === got.singular) &&
    list(want.shortNames) === list(got.shortNames) &&
    list(want.categories) === list(got.categories)
  );
}
