import type { ResourceDefinition, ResourceStrategy } from '../../registry/resource-definition.js';
import { TENANCY_GROUP } from '../tenant/tenant-api.js';
import { SHARD_STORAGE_RESOURCE, SHARD_VERSION } from './shard-api.js';
import { shardSchema } from './shard.schema.js';
import { platformShardStrategy, shardStatusStrategy, shardStrategy } from './shard.strategy.js';
import { shardTable } from './shard-table.js';

function shardResourceWith(strategy: ResourceStrategy): ResourceDefinition {
  return {
    group: TENANCY_GROUP,
    version: SHARD_VERSION,
    resource: 'shards',
    singular: 'shard',
    kind: 'Shard',
    listKind: 'ShardList',
    namespaced: false,
    shortNames: [],
    categories: [],
    verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'],
    subresources: [{ name: 'status', kind: 'Shard', group: TENANCY_GROUP, version: SHARD_VERSION, verbs: ['get', 'patch', 'update'] }],
    schema: shardSchema,
    strategy,
    subresourceStrategies: { status: shardStatusStrategy },
    table: shardTable,
    selectableFields: {},
    storageResource: SHARD_STORAGE_RESOURCE,
    tracksGeneration: true,
    // Every replica keeps the Shards (placement, connections): a write returns once this replica has applied it.
    cachedOnEveryReplica: true,
    returnDeletedObject: true,
    nameValidation: 'label',
  };
}

/**
 * tenancy.plinth.dev/v1beta1 Shard: cluster-scoped, served only in the
 * platform scope (next to Tenant), stored as v1beta1, with a status
 * subresource and the columns NAME, READY, TENANTS, OBJECTS, SIZE, AGE
 * (HOST with -o wide). Clients may not create the shard `default`.
 */
export const shardResource: ResourceDefinition = shardResourceWith(shardStrategy);

/**
 * The same Shard objects for the platform's own writes (never served):
 * with `systemWriteContext(PLATFORM_TENANT, platformShardResource)` the
 * platform registers and maintains the shard `default`, which a client's
 * create through {@link shardResource} is refused.
 */
export const platformShardResource: ResourceDefinition = shardResourceWith(platformShardStrategy);
