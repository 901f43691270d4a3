import type { KubeObject } from '@plinth/apimachinery';

/** The API group of the Tenant kind. */
export const TENANCY_GROUP = 'tenancy.plinth.dev';
/** The first version of the Tenant kind, and its storage version (alpha: served only when the runtime configuration enables it). */
export const TENANCY_VERSION = 'v1alpha1';
/** The beta version of the Tenant kind: the same objects as v1alpha1 (same schema), served by default. */
export const TENANCY_BETA_VERSION = 'v1beta1';
/** `group/resource` under which Tenant objects are stored. */
export const TENANT_STORAGE_RESOURCE = `${TENANCY_GROUP}/tenants`;
/**
 * The logical cluster that is the platform scope (kcp's root workspace): the
 * unprefixed paths (and `/clusters/default`). Tenant objects live and are
 * served only here; single-user setups use it as their cluster.
 */
export const PLATFORM_TENANT = 'default';
/** The finalizer that keeps a Tenant until everything in its logical cluster is gone. */
export const TENANT_FINALIZER = 'tenancy.plinth.dev/logical-cluster';

/** A Tenant's phase: Initializing until its logical cluster is ready, Active, Terminating once deleted. */
export type TenantPhaseName = 'Initializing' | 'Active' | 'Terminating';

/** One owner: a user or a group, named as authentication names it. */
export interface TenantOwner {
  kind: 'User' | 'Group';
  name: string;
}

/** Limits of a tenant (validated here; enforced by the fair-sharing work). Absent fields mean no limit. */
export interface TenantLimits {
  objects?: number;
  objectsPerResource?: Record<string, number>;
  bytes?: string | number;
  customResourceDefinitions?: number;
  webhookConfigurations?: number;
  concurrentRequests?: number;
  requestsPerSecond?: number;
}

/** `spec.snapshots`: scheduled snapshots of the tenant (docs/snapshots.md). */
export interface TenantSnapshotSchedule {
  /** A cron expression (5 fields, or 6 with seconds first), in UTC; absent: the platform's PLINTH_SNAPSHOT_SCHEDULE. */
  schedule?: string;
  /** Snapshots kept (older ones are deleted); absent: PLINTH_SNAPSHOT_KEEP. */
  keep?: number;
  /** age X25519 recipients (age1…) Secrets are sealed to; absent: PLINTH_SNAPSHOT_RECIPIENTS. */
  recipients?: string[];
  /** True: no scheduled snapshot of this tenant (not even the platform's). */
  suspend?: boolean;
}

/** A key of a Secret in the platform scope. */
export interface SecretKeyRef {
  namespace: string;
  name: string;
  /** The key of its data; absent: `identity`. */
  key?: string;
}

/** `spec.source`: what a new tenant is restored from once provisioned. */
export interface TenantSource {
  /** A snapshot's location in the snapshot target (as status.snapshots.location and the snapshot list name it: `<tenant>/<file>.snapshot`). */
  snapshot: string;
  /** The Secret holding an age identity (AGE-SECRET-KEY-1…) that opens the snapshot's sealed Secrets. */
  identitySecretRef?: SecretKeyRef;
}

/** `status.snapshots`: the scheduled snapshots' last run and last success. */
export interface TenantSnapshotStatus {
  /** When the schedule last started a snapshot (the next run is the schedule's first time after it). */
  lastScheduleTime?: string;
  lastSuccessfulTime?: string;
  /** The newest snapshot written: its location, revision, size and objects. */
  location?: string;
  revision?: number;
  bytes?: number;
  objects?: number;
}

/** The condition a scheduled snapshot reports: Unknown while running, True after success, False after a failure. */
export const SNAPSHOT_CONDITION = 'SnapshotSucceeded';
/** The condition of a restore from spec.source: Unknown while restoring, True once restored, False when it failed. */
export const SOURCE_CONDITION = 'SourceRestored';

/** A metav1.Condition. */
export interface TenantCondition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
  lastTransitionTime: string;
  observedGeneration?: number;
}

/** `status` of a Tenant. */
export interface TenantStatus {
  phase?: TenantPhaseName;
  /** What the tenant holds: all objects and stored bytes, and objects per resource (`<resource>.<group>`). */
  usage?: { objects: number; bytes: number; objectsPerResource: Record<string, number> };
  url?: string;
  /** The Shard the tenant lives on (server-owned). */
  shard?: string;
  /** The resourceVersion from which its current shard makes its changes (set when a move switches it there). */
  shardResourceVersion?: string;
  /** The generation of the tenant's latest move (server-owned): every step of an older mover fails (see the tenant mover). */
  moveGeneration?: string;
  /** Scheduled snapshots (written by the snapshot scheduler). */
  snapshots?: TenantSnapshotStatus;
  conditions?: TenantCondition[];
}

/** A Tenant object as stored. */
export interface TenantObject extends KubeObject {
  /** `shard`: the Shard the tenant should live on (a change means a move); absent: the platform places it. */
  spec?: { owners?: TenantOwner[]; limits?: TenantLimits; shard?: string; snapshots?: TenantSnapshotSchedule; source?: TenantSource };
  status?: TenantStatus;
}
