import type { UserInfo } from '@plinth/apimachinery';

/** The operation an admission request is for. */
export type AdmissionOperation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';

/** Group/version/kind of an object. */
export interface GroupVersionKind {
  group: string;
  version: string;
  kind: string;
}

/** Group/version/resource of a request. */
export interface GroupVersionResource {
  group: string;
  version: string;
  resource: string;
}

/** Who makes the request; re-exported from @plinth/apimachinery where it lives. */
export type { UserInfo };

/**
 * Everything an admission module may look at, as upstream's
 * admission.Attributes. `object` is mutable by mutating modules only.
 */
export interface AdmissionAttributes {
  tenant: string;
  user: UserInfo;
  operation: AdmissionOperation;
  kind: GroupVersionKind;
  resource: GroupVersionResource;
  subresource: string;
  namespace: string;
  name: string;
  /** The new object (null on DELETE). Mutating modules may replace its fields. */
  object: Record<string, unknown> | null;
  /** The current object (UPDATE and DELETE). */
  oldObject: Record<string, unknown> | null;
  /** CreateOptions / UpdateOptions / DeleteOptions as sent. */
  options: Record<string, unknown> | null;
  dryRun: boolean;
  /** Whether the kind is namespaced. */
  namespaced: boolean;
}
