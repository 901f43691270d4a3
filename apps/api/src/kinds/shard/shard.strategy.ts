import { isPlainObject, type KubeObject } from '@plinth/apimachinery';
import type { ResourceStrategy } from '../../registry/resource-definition.js';
import { DEFAULT_SHARD_SECRET_KEY } from './shard-api.js';
import { validateShard, validateShardCreate, validateShardStatus } from './shard.validation.js';

/** Upstream-style defaulting: an absent or empty `spec.secretRef.key` becomes "url". Mutates `obj`. */
function withDefaults(obj: KubeObject): void {
  const ref = isPlainObject(obj.spec) ? obj.spec.secretRef : undefined;
  if (isPlainObject(ref) && (ref.key === undefined || ref.key === null || ref.key === '')) ref.key = DEFAULT_SHARD_SECRET_KEY;
}

/**
 * The platform's own writes of Shards (through {@link platformShardResource}):
 * as {@link shardStrategy} but may create the shard `default`. Status is
 * server-owned on the main resource: empty on create, kept on updates.
 * Pure; the methods mutate only the object they are given.
 */
export const platformShardStrategy: ResourceStrategy = {
  prepareForCreate: (obj: KubeObject) => {
    obj.status = {};
    withDefaults(obj);
  },
  prepareForUpdate: (obj: KubeObject, old: KubeObject) => {
    obj.status = old.status;
    withDefaults(obj);
  },
  validate: (obj: KubeObject) => validateShard(obj),
  validateUpdate: (obj: KubeObject) => validateShard(obj),
  allowCreateOnUpdate: false,
  allowUnconditionalUpdate: true,
};

/**
 * Shards as clients write them: {@link platformShardStrategy}, except that a
 * client may not create the shard `default` (422 on metadata.name); it may
 * update it (e.g. cordon it) once the platform registered it.
 */
export const shardStrategy: ResourceStrategy = {
  ...platformShardStrategy,
  validate: (obj: KubeObject) => validateShardCreate(obj),
};

/** Writes to shards/status: only status may change, and it is validated (see validateShardStatus). Mutates `obj`. */
export const shardStatusStrategy: ResourceStrategy = {
  ...platformShardStrategy,
  prepareForCreate: () => undefined,
  prepareForUpdate: (obj: KubeObject, old: KubeObject) => {
    obj.spec = old.spec;
    obj.metadata = { ...old.metadata, resourceVersion: obj.metadata.resourceVersion };
  },
  validateUpdate: (obj: KubeObject) => validateShardStatus(obj),
};
