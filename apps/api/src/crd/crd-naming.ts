import { isDeepStrictEqual } from 'node:util';
import type { CrdCondition, CrdNames, CrdObject } from '../kinds/customresourcedefinition/crd-types.js';

/**
 * Upstream's NamingConditionController.calculateNamesAndConditions: a
 * requested name is accepted when it is already this CRD's accepted name
 * or no other CRD of the same group has accepted it; conflicts leave the
 * old accepted name in place and set NamesAccepted=False with a reason
 * (PluralConflict, SingularConflict, ShortNamesConflict, KindConflict,
 * ListKindConflict) and message `"x" is already in use`. Pure.
 */
export function calculateNames(crd: CrdObject, all: CrdObject[]): { names: CrdNames; namesAccepted: CrdCondition } {
  const group = crd.spec.group;
  const resources = new Set<string>();
  const kinds = new Set<string>();
  for (const other of all) {
    if (other.metadata.name === crd.metadata.name || other.spec.group !== group) continue;
    const a = other.status?.acceptedNames ?? {};
    for (const n of [a.plural, a.singular, ...(a.shortNames ?? [])]) if (n) resources.add(n);
    for (const n of [a.kind, a.listKind]) if (n) kinds.add(n);
  }
  const requested = crd.spec.names ?? {};
  const accepted = crd.status?.acceptedNames ?? {};
  const names: CrdNames = { ...accepted };
  const cond: CrdCondition = { type: 'NamesAccepted', status: 'Unknown' };
  const conflict = (reason: string, name: string) => {
    cond.status = 'False';
    cond.reason = reason;
    cond.message = `"${name}" is already in use`;
  };
  const fresh = (req: string | undefined, acc: string | undefined, used: Set<string>) => req === acc || !used.has(req ?? '');

  if (fresh(requested.plural, accepted.plural, resources)) names.plural = requested.plural;
  else conflict('PluralConflict', requested.plural ?? '');
  if (fresh(requested.singular, accepted.singular, resources)) names.singular = requested.singular;
  else conflict('SingularConflict', requested.singular ?? '');
  if (!isDeepStrictEqual(requested.shortNames ?? [], accepted.shortNames ?? [])) {
    const existing = new Set(accepted.shortNames ?? []);
    const bad = (requested.shortNames ?? []).filter((s) => !existing.has(s) && resources.has(s));
    if (bad.length > 0) {
      cond.status = 'False';
      cond.reason = 'ShortNamesConflict';
      cond.message = bad.length === 1 ? `"${bad[0]}" is already in use` : `[${bad.map((b) => `"${b}" is already in use`).join(', ')}]`;
    } else names.shortNames = requested.shortNames;
  }
  if (fresh(requested.kind, accepted.kind, kinds)) names.kind = requested.kind;
  else conflict('KindConflict', requested.kind ?? '');
  if (fresh(requested.listKind, accepted.listKind, kinds)) names.listKind = requested.listKind;
  else conflict('ListKindConflict', requested.listKind ?? '');
  names.categories = requested.categories;
  if (names.categories === undefined) delete names.categories;
  if (names.shortNames === undefined) delete names.shortNames;
  if (cond.status === 'Unknown') {
    cond.status = 'True';
    cond.reason = 'NoConflicts';
    cond.message = 'no conflicts found';
  }
  return { names, namesAccepted: cond };
}
