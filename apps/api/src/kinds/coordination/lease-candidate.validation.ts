import { type FieldError, fieldErrors, isConfigMapKey, isPlainObject, isQualifiedName, type KubeObject } from '@plinth/apimachinery';
import { compareSemver, parseSemver } from './semantic-version.js';

/** The strategy Kubernetes defines (CoordinatedLeaseStrategy). */
export const OLDEST_EMULATION_VERSION = 'OldestEmulationVersion';

function text(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

/** Upstream's ValidateCoordinatedLeaseStrategy under `field` (its own child `strategy`, as upstream's path). */
function validateStrategy(strategy: string, field: string): FieldError[] {
  const f = `${field}.strategy`;
  if (!strategy.includes('/')) return strategy === OLDEST_EMULATION_VERSION ? [] : [fieldErrors.notSupported(f, strategy, [OLDEST_EMULATION_VERSION])];
  return isQualifiedName(strategy).map((m) => fieldErrors.invalid(f, strategy, m));
}

/**
 * Upstream's ValidateLeaseCandidate (coordination/validation, v1beta1
 * fields): the name is a ConfigMap key; leaseName and binaryVersion
 * required; binaryVersion and emulationVersion strict semantic versions,
 * binary not below emulation; strategy required (OldestEmulationVersion or
 * a qualified `prefix/name`), emulationVersion required with
 * OldestEmulationVersion. Does not mutate.
 */
export function validateLeaseCandidate(o: KubeObject): FieldError[] {
  const errs: FieldError[] = [];
  const name = text(o.metadata.name);
  if (name) for (const m of isConfigMapKey(name)) errs.push(fieldErrors.invalid('metadata.name', name, m));
  const spec = isPlainObject(o.spec) ? o.spec : {};
  if (text(spec.leaseName) === '') errs.push(fieldErrors.required('spec.leaseName'));
  const evText = text(spec.emulationVersion);
  const bvText = text(spec.binaryVersion);
  const ev = evText ? parseSemver(evText) : undefined;
  if (evText && !ev) errs.push(fieldErrors.invalid('spec.emulationVersion', evText, 'must be a valid semantic version'));
  const bv = bvText ? parseSemver(bvText) : undefined;
  if (!bvText) errs.push(fieldErrors.required('spec.binaryVersion'));
  else if (!bv) errs.push(fieldErrors.invalid('spec.binaryVersion', bvText, 'must be a valid semantic version'));
  if (bvText && evText && compareSemver(bv ?? { major: 0, minor: 0, patch: 0, pre: [] }, ev ?? { major: 0, minor: 0, patch: 0, pre: [] }) < 0) {
    errs.push(fieldErrors.invalid('spec.binaryVersion', bvText, 'must be greater than or equal to `emulationVersion`'));
  }
  const strategy = text(spec.strategy);
  if (strategy === '') errs.push(fieldErrors.required('spec.strategy'));
  else {
    if (strategy === OLDEST_EMULATION_VERSION && !ev) errs.push(fieldErrors.required('spec.emulationVersion', "must be specified when `strategy` is 'OldestEmulationVersion'"));
    errs.push(...validateStrategy(strategy, 'spec.strategy'));
  }
  return errs;
}

/** Upstream's ValidateLeaseCandidateUpdate: as on create, and spec.leaseName is immutable. */
export function validateLeaseCandidateUpdate(o: KubeObject, old: KubeObject): FieldError[] {
  const errs = validateLeaseCandidate(o);
  const now = isPlainObject(o.spec) ? o.spec.leaseName : undefined;
  const was = isPlainObject(old.spec) ? old.spec.leaseName : undefined;
  if (now !== was) errs.push(fieldErrors.invalid('spec.leaseName', now ?? '', 'field is immutable'));
  return errs;
}
