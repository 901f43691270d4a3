import type { StructuralSchema } from '@plinth/apimachinery';
import { objectMetaProperty, typeMetaProperties } from '../../schema/object-meta.schema.js';
import { tenantConditionSchema } from '../tenant/tenant.schema.js';

const count = (description: string): StructuralSchema => ({ type: 'integer', format: 'int64', minimum: 0, description });

/** tenancy.plinth.dev/v1beta1 ShardSecretReference. */
export const shardSecretRefSchema: StructuralSchema = {
  type: 'object',
  description:
    'ShardSecretReference names a Secret in the platform scope whose key holds the libpq connection URL of the shard\'s PostgreSQL database (postgres://user:password@host:port/database?options). The password lives only in the Secret.',
  required: ['name', 'namespace'],
  properties: {
    name: { type: 'string', description: 'Name of the Secret.' },
    namespace: { type: 'string', description: 'Namespace of the Secret, in the platform scope.' },
    key: { type: 'string', description: 'Key of the Secret that holds the URL. Defaults to "url".' },
    readReplicaKey: {
      type: 'string',
      description:
        'Key of the same Secret that holds the URL of a streaming standby of the shard\'s primary (a read replica): gets and lists that allow a stale answer (resourceVersion=0, or NotOlderThan a revision it has replayed) are read there. None when unset.',
    },
  },
};

/** tenancy.plinth.dev/v1beta1 ShardSpec. */
export const shardSpecSchema: StructuralSchema = {
  type: 'object',
  description: 'ShardSpec is how the platform reaches a shard and whether new tenants may be placed on it.',
  properties: {
    secretRef: {
      ...shardSecretRefSchema,
      description:
        'SecretRef names the Secret that holds the connection URL. Required for every shard except "default", which is the platform\'s own database and takes its connection from the server\'s configuration.',
    },
    unschedulable: {
      type: 'boolean',
      description: 'Unschedulable cordons the shard: no new tenant is placed on it; the tenants it holds stay. Defaults to false.',
    },
  },
};

/** tenancy.plinth.dev/v1beta1 ShardStatus. */
export const shardStatusSchema: StructuralSchema = {
  type: 'object',
  description: 'ShardStatus is the observed state of a shard, reported by the platform.',
  properties: {
    conditions: {
      type: 'array',
      description: 'Conditions of the shard: Ready (reachable and its migrations applied; when not, the reason and a message naming the host, never the password).',
      items: tenantConditionSchema,
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['type'],
    },
    tenants: count('Tenants is the number of tenants that live on the shard.'),
    objects: count('Objects is the number of objects the shard holds, of every tenant.'),
    bytes: count('Bytes is the size of the stored objects on the shard.'),
    host: { type: 'string', description: 'Host is the host:port/database the connection URL names (never the user or the password).' },
    observedGeneration: { type: 'integer', format: 'int64', description: 'ObservedGeneration is the metadata.generation this status was computed for.' },
  },
};

/** tenancy.plinth.dev/v1beta1 Shard. */
export const shardSchema: StructuralSchema = {
  type: 'object',
  description:
    'Shard is a PostgreSQL database of the platform that tenants live on. Shard "default" is the platform\'s own database, which also holds the Tenant and Shard objects.',
  properties: {
    ...typeMetaProperties(),
    metadata: objectMetaProperty(),
    spec: { ...shardSpecSchema, description: 'Spec is how the platform reaches the shard and whether tenants may be placed on it.' },
    status: { ...shardStatusSchema, description: 'Status is the observed state of the shard.' },
  },
};
