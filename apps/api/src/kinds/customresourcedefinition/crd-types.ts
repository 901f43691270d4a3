import type { KubeObject } from '@plinth/apimachinery';
import { isPlainObject, rfc3339Now } from '@plinth/apimachinery';
import type { StructuralSchema } from '@plinth/apimachinery';

/** apiextensions.k8s.io/v1 CustomResourceDefinitionNames. */
export interface CrdNames {
  plural?: string;
  singular?: string;
  kind?: string;
  listKind?: string;
  shortNames?: string[];
  categories?: string[];
}

/** One additionalPrinterColumns entry. */
export interface CrdColumn {
  name?: string;
  type?: string;
  format?: string;
  description?: string;
  priority?: number;
  jsonPath?: string;
}

/** spec.versions[].subresources. */
export interface CrdSubresources {
  status?: Record<string, unknown> | null;
  scale?: { specReplicasPath?: string; statusReplicasPath?: string; labelSelectorPath?: string } | null;
}

/** One entry of spec.versions. */
export interface CrdVersion {
  name?: string;
  served?: boolean;
  storage?: boolean;
  deprecated?: boolean;
  deprecationWarning?: string | null;
  schema?: { openAPIV3Schema?: StructuralSchema | null } | null;
  subresources?: CrdSubresources | null;
  additionalPrinterColumns?: CrdColumn[] | null;
  selectableFields?: Array<{ jsonPath?: string }> | null;
}

/** One status condition of a CRD. */
export interface CrdCondition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
  /** The metadata.generation the condition was computed from (1.35+). */
  observedGeneration?: number;
}

/** spec of a CustomResourceDefinition. */
export interface CrdSpec {
  group?: string;
  names?: CrdNames;
  scope?: string;
  versions?: CrdVersion[];
  conversion?: { strategy?: string; webhook?: { clientConfig?: unknown; conversionReviewVersions?: unknown } | null } | null;
  preserveUnknownFields?: boolean;
}

/** status of a CustomResourceDefinition. */
export interface CrdStatus {
  acceptedNames?: CrdNames;
  conditions?: CrdCondition[] | null;
  storedVersions?: string[] | null;
}

/** A CustomResourceDefinition object. */
export interface CrdObject extends KubeObject {
  spec: CrdSpec;
  status?: CrdStatus;
}

/** The finalizer that keeps a CRD until its instances are gone. */
export const CRD_CLEANUP_FINALIZER = 'customresourcecleanup.apiextensions.k8s.io';

/** The group of CustomResourceDefinitions. */
export const APIEXTENSIONS_GROUP = 'apiextensions.k8s.io';

/** Reads an object as a CRD (spec/status coerced to objects). Does not copy. */
export function asCrd(obj: KubeObject): CrdObject {
  if (!isPlainObject(obj.spec)) obj.spec = {};
  return obj as CrdObject;
}

/** The condition of `type`, or undefined. */
export function findCondition(crd: CrdObject, type: string): CrdCondition | undefined {
  return (crd.status?.conditions ?? []).find((c) => c && c.type === type);
}

/** True when the condition of `type` has status True. */
export function isConditionTrue(crd: CrdObject, type: string): boolean {
  return findCondition(crd, type)?.status === 'True';
}

/**
 * Sets a condition as upstream SetCRDCondition does: lastTransitionTime
 * changes only when the status changes; observedGeneration (1.35+) is the
 * CRD's current metadata.generation. Mutates `crd`.
 */
export function setCondition(crd: CrdObject, cond: CrdCondition): void {
  crd.status ??= {};
  const list = (crd.status.conditions ??= []);
  const generation = typeof crd.metadata.generation === 'number' ? crd.metadata.generation : undefined;
  const existing = list.find((c) => c.type === cond.type);
  if (!existing) {
    list.push({ ...cond, lastTransitionTime: rfc3339Now(), ...(generation !== undefined ? { observedGeneration: generation } : {}) });
    return;
  }
  if (existing.status !== cond.status) existing.lastTransitionTime = rfc3339Now();
  existing.status = cond.status;
  existing.reason = cond.reason;
  existing.message = cond.message;
  if (generation !== undefined) existing.observedGeneration = generation;
}

/** The storage version's name, or undefined for an invalid CRD. */
export function storageVersionOf(crd: CrdObject): string | undefined {
  return (crd.spec.versions ?? []).find((v) => v.storage)?.name;
}

/** The storage key resource of a CRD's instances: `<plural>.<group>`. */
export function customResourceStorage(crd: CrdObject): string {
  return `${crd.spec.names?.plural ?? ''}.${crd.spec.group ?? ''}`;
}
