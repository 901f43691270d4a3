import { type FieldError, isPlainObject, type KubeObject } from '@plinth/apimachinery';
import type { ResourceStrategy, StrategyContext } from '../../registry/resource-definition.js';
import { asCrd, CRD_CLEANUP_FINALIZER, type CrdObject, storageVersionOf } from './crd-types.js';
import { validateCrd, validateCrdUpdate, validateNames } from './crd-validation.js';
import { schemaGateNames, validateSchemaGates } from './schema/schema-feature-gates.js';

/**
 * The strategies of CustomResourceDefinitions
 * (registry/customresourcedefinition): v1 defaulting (singular, listKind,
 * conversion None), status owned by the server, storedVersions tracking,
 * and the cleanup finalizer that makes deletion remove all instances first.
 */

/** v1 SetDefaults of a CRD spec (names, conversion None, conversion service port 443). Mutates `crd`. */
export function defaultCrd(crd: CrdObject): void {
  const names = (crd.spec.names ??= {});
  if (names.kind && !names.singular) names.singular = names.kind.toLowerCase();
  if (names.kind && !names.listKind) names.listKind = `${names.kind}List`;
  if (!isPlainObject(crd.spec.conversion)) crd.spec.conversion = { strategy: 'None' };
  const service = (crd.spec.conversion.webhook as { clientConfig?: { service?: unknown } } | null | undefined)?.clientConfig?.service;
  if (isPlainObject(service) && (service.port === undefined || service.port === null)) service.port = 443;
}

function recordStorageVersion(crd: CrdObject): void {
  const storage = storageVersionOf(crd);
  if (!storage) return;
  crd.status ??= {};
  const stored = (crd.status.storedVersions ??= []);
  if (!stored.includes(storage)) stored.push(storage);
}

function ensureFinalizer(obj: KubeObject): void {
  if (obj.metadata.deletionTimestamp) return;
  const f = (obj.metadata.finalizers ??= []);
  if (!f.includes(CRD_CLEANUP_FINALIZER)) f.push(CRD_CLEANUP_FINALIZER);
}

/**
 * The feature gates a CRD's schemas name must be known to the server, as
 * `x-plinth-feature-gate` and `x-plinth-feature-gated-values` require; on
 * update, gates the stored CRD already named stay allowed (an operator may
 * have removed a definition since).
 */
function validateCrdFeatureGates(crd: CrdObject, old: CrdObject | undefined, ctx: StrategyContext): FieldError[] {
  const before = new Set((old?.spec.versions ?? []).flatMap((v) => [...schemaGateNames(v.schema?.openAPIV3Schema ?? undefined)]));
  const known = (gate: string) => ctx.featureStage(gate) !== undefined || before.has(gate);
  return (crd.spec.versions ?? []).flatMap((v, i) => validateSchemaGates(v.schema?.openAPIV3Schema ?? undefined, `spec.versions[${i}].schema.openAPIV3Schema`, known));
}

/** The main strategy of customresourcedefinitions. */
export const crdStrategy: ResourceStrategy = {
  prepareForCreate(obj) {
    const crd = asCrd(obj);
    crd.status = { acceptedNames: { plural: '', kind: '' } };
    defaultCrd(crd);
    recordStorageVersion(crd);
    ensureFinalizer(obj);
  },
  prepareForUpdate(obj, old) {
    const crd = asCrd(obj);
    crd.status = structuredClone((old as CrdObject).status ?? {});
    defaultCrd(crd);
    recordStorageVersion(crd);
    ensureFinalizer(obj);
  },
  validate: (obj, ctx) => [...validateCrd(asCrd(obj)), ...validateCrdFeatureGates(asCrd(obj), undefined, ctx)],
  validateUpdate: (obj, old, ctx) => [...validateCrdUpdate(asCrd(obj), asCrd(old)), ...validateCrdFeatureGates(asCrd(obj), asCrd(old), ctx)],
  allowCreateOnUpdate: false,
  allowUnconditionalUpdate: false,
};

/** The `/status` strategy of customresourcedefinitions: the spec is kept. */
export const crdStatusStrategy: ResourceStrategy = {
  prepareForCreate: () => undefined,
  prepareForUpdate(obj, old) {
    obj.spec = structuredClone((old as CrdObject).spec);
  },
  validate: () => [],
  validateUpdate: (obj) => validateNames(asCrd(obj).status?.acceptedNames, 'status.acceptedNames'),
  allowCreateOnUpdate: false,
  allowUnconditionalUpdate: false,
};
