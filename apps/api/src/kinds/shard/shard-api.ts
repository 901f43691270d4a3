import type { KubeObject } from '@plinth/apimachinery';
import { TENANCY_GROUP, type TenantCondition } from '../tenant/tenant-api.js';

/** The version of the Shard kind: served and stored as v1beta1 (no alpha version). */
export const SHARD_VERSION = 'v1beta1';
/** `group/resource` under which Shard objects are stored. */
export const SHARD_STORAGE_RESOURCE = `${TENANCY_GROUP}/shards`;
/**
 * The shard that is the platform's own database (`DATABASE_URL` or the
 * embedded one). Clients may not create it; the platform writes it through
 * {@link platformShardResource} and its connection comes from the server's
 * configuration, never from a Secret.
 */
export { DEFAULT_SHARD } from '@plinth/storage';
/** The key of the referenced Secret read when `spec.secretRef.key` is not set. */
export const DEFAULT_SHARD_SECRET_KEY = 'url';
/** The type of the condition that says whether a shard can be used (reachable, migrations applied). */
export const SHARD_READY_CONDITION = 'Ready';
/** The Shard condition saying whether a write acknowledged now survives the loss of its primary (a synchronous standby has it). */
export const SHARD_DURABLE_CONDITION = 'SurvivesPrimaryLoss';

/** A Secret in the platform scope whose `key` holds the shard's libpq URL (with its password). */
export interface ShardSecretRef {
  name: string;
  namespace: string;
  /** Defaults to {@link DEFAULT_SHARD_SECRET_KEY}. */
  key?: string;
}

/** `spec` of a Shard. */
export interface ShardSpec {
  /** Required for every shard but {@link DEFAULT_SHARD}, which must not have one. */
  secretRef?: ShardSecretRef;
  /** Cordon: no new tenant is placed on the shard (absent means false). */
  unschedulable?: boolean;
}

/** A metav1.Condition, as Shard status uses it. */
export type ShardCondition = TenantCondition;

/** `status` of a Shard: server-owned, filled by the shard controller. */
export interface ShardStatus {
  conditions?: ShardCondition[];
  /** Tenants that live on the shard. */
  tenants?: number;
  /** Objects the shard holds, of every tenant. */
  objects?: number;
  /** Bytes of the stored objects. */
  bytes?: number;
  /** `host:port/database` the URL names; never the user or the password. */
  host?: string;
  observedGeneration?: number;
}

/** A Shard object as stored. */
export interface ShardObject extends KubeObject {
  spec?: ShardSpec;
  status?: ShardStatus;
}
