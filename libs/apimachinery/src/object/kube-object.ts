/** An owner reference as stored in metadata.ownerReferences. */
export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

/** metav1.ObjectMeta as Plinth stores and serves it. */
export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: OwnerReference[];
  finalizers?: string[];
  managedFields?: unknown[];
  [key: string]: unknown;
}

/** Any API object: typed fields plus whatever the kind has. */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  [key: string]: unknown;
}

/** True when `v` is a plain JSON object (not an array, not null). */
export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

const STATUS_WRITE_KEEPS = ['deletionTimestamp', 'generation', 'labels', 'annotations', 'finalizers', 'ownerReferences'] as const;

/**
 * upstream's metav1.ResetObjectMetaForStatus: a write to a status
 * subresource keeps the stored deletionTimestamp, generation, labels,
 * annotations, finalizers and ownerReferences (managedFields are the
 * write's own). Mutates `meta`.
 */
export function resetObjectMetaForStatus(meta: ObjectMeta, old: ObjectMeta): void {
  for (const k of STATUS_WRITE_KEEPS) {
    if (old[k] === undefined) delete meta[k];
    else meta[k] = structuredClone(old[k]) as never;
  }
}
