import { objectMetaProperty, timeSchema, typeMetaProperties } from '../../schema/object-meta.schema.js';
import type { StructuralSchema } from '@plinth/apimachinery';

const count = (description: string): StructuralSchema => ({ type: 'integer', format: 'int64', minimum: 0, description });
const rate = (description: string): StructuralSchema => ({ type: 'integer', format: 'int32', minimum: 1, description });

/** tenancy.plinth.dev/v1alpha1 TenantOwner. */
export const tenantOwnerSchema: StructuralSchema = {
  type: 'object',
  description: 'TenantOwner names a user or a group that administers the tenant: it is bound to cluster-admin inside the tenant.',
  required: ['kind', 'name'],
  properties: {
    kind: { type: 'string', description: 'Kind of the owner: "User" or "Group".', enum: ['User', 'Group'] },
    name: { type: 'string', description: 'Name of the user or group, as authentication reports it.' },
  },
};

/** tenancy.plinth.dev/v1alpha1 TenantLimits. */
export const tenantLimitsSchema: StructuralSchema = {
  type: 'object',
  description: 'TenantLimits bounds what the tenant may hold and how fast it may ask. An absent field means no limit beyond the platform\'s defaults.',
  properties: {
    objects: count('Objects is the most objects the tenant may hold in total, of every resource.'),
    objectsPerResource: {
      type: 'object',
      description: 'ObjectsPerResource is the most objects of one resource, keyed by "<resource>" for the core group or "<resource>.<group>" (e.g. "configmaps", "crontabs.stable.example.com").',
      additionalProperties: count(''),
    },
    bytes: {
      'x-kubernetes-int-or-string': true,
      description: 'Bytes is the most storage the tenant\'s objects may take, as a quantity (e.g. "512Mi", "10G") or a number of bytes.',
    },
    customResourceDefinitions: count('CustomResourceDefinitions is the most CustomResourceDefinitions the tenant may define.'),
    webhookConfigurations: count('WebhookConfigurations is the most mutating and validating webhook configurations, together, the tenant may hold.'),
    concurrentRequests: rate('ConcurrentRequests is the most requests of the tenant served at once.'),
    requestsPerSecond: rate('RequestsPerSecond is the sustained rate of requests the tenant may make.'),
  },
};

/** metav1.Condition, as Tenant status uses it. */
export const tenantConditionSchema: StructuralSchema = {
  type: 'object',
  description: 'Condition contains details for one aspect of the current state of this API Resource.',
  required: ['type', 'status', 'lastTransitionTime', 'reason', 'message'],
  properties: {
    lastTransitionTime: { ...timeSchema, description: 'lastTransitionTime is the last time the condition transitioned from one status to another.' },
    message: { type: 'string', description: 'message is a human readable message indicating details about the transition.' },
    observedGeneration: { type: 'integer', format: 'int64', description: 'observedGeneration represents the .metadata.generation that the condition was set based upon.' },
    reason: { type: 'string', description: 'reason contains a programmatic identifier indicating the reason for the condition\'s last transition.' },
    status: { type: 'string', description: 'status of the condition, one of True, False, Unknown.', enum: ['True', 'False', 'Unknown'] },
    type: { type: 'string', description: 'type of condition in CamelCase.' },
  },
};

/** tenancy.plinth.dev/v1alpha1 TenantSpec. */
export const tenantSpecSchema: StructuralSchema = {
  type: 'object',
  description: 'TenantSpec is what the platform administrator asks for a tenant.',
  properties: {
    owners: {
      type: 'array',
      description: 'Owners administer the tenant: each is bound to cluster-admin inside it.',
      items: tenantOwnerSchema,
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['kind', 'name'],
    },
    limits: tenantLimitsSchema,
    shard: {
      type: 'string',
      description:
        'Shard names the Shard (the PostgreSQL database) the tenant should live on. Absent: the platform places a new tenant. Changing it moves the tenant to the named shard.',
    },
    snapshots: {
      type: 'object',
      description: 'Snapshots schedules snapshots of the tenant into the platform\'s snapshot target (PLINTH_SNAPSHOT_DIR or PLINTH_SNAPSHOT_S3_URL).',
      properties: {
        schedule: { type: 'string', description: 'Schedule is a cron expression in UTC (5 fields, or 6 with seconds first). Absent: the platform\'s PLINTH_SNAPSHOT_SCHEDULE.' },
        keep: { type: 'integer', format: 'int32', minimum: 1, description: 'Keep is how many snapshots are kept; older ones are deleted. Absent: PLINTH_SNAPSHOT_KEEP.' },
        recipients: { type: 'array', items: { type: 'string' }, description: 'Recipients are age X25519 public keys (age1…) the Secrets are sealed to. Absent: PLINTH_SNAPSHOT_RECIPIENTS.' },
        suspend: { type: 'boolean', description: 'Suspend stops scheduled snapshots of the tenant.' },
      },
    },
    source: {
      type: 'object',
      description: 'Source restores a snapshot into the new tenant once it is provisioned (condition SourceRestored). Set at creation; immutable.',
      required: ['snapshot'],
      properties: {
        snapshot: { type: 'string', description: 'Snapshot is the location of a snapshot in the platform\'s snapshot target: "<tenant>/<file>.snapshot".' },
        identitySecretRef: {
          type: 'object',
          description: 'IdentitySecretRef names a Secret of the platform scope whose key holds an age identity (AGE-SECRET-KEY-1…) that opens the snapshot\'s Secrets.',
          required: ['namespace', 'name'],
          properties: {
            namespace: { type: 'string', description: 'Namespace of the Secret.' },
            name: { type: 'string', description: 'Name of the Secret.' },
            key: { type: 'string', description: 'Key of the Secret\'s data. Absent: "identity".' },
          },
        },
      },
    },
  },
};

/** tenancy.plinth.dev/v1alpha1 TenantStatus. */
export const tenantStatusSchema: StructuralSchema = {
  type: 'object',
  description: 'TenantStatus is the observed state of a tenant.',
  properties: {
    phase: {
      type: 'string',
      description:
        'Phase of the tenant.\n\nPossible enum values:\n - `"Initializing"` the logical cluster is being created\n - `"Active"` the tenant is ready for use\n - `"Terminating"` the tenant is being deleted with everything in it',
      enum: ['Initializing', 'Active', 'Terminating'],
    },
    url: { type: 'string', description: 'URL is the address of the tenant\'s logical cluster: <server>/clusters/<name>.' },
    shard: { type: 'string', description: 'Shard is the Shard the tenant lives on: the database its objects are stored in.' },
    shardResourceVersion: {
      type: 'string',
      description: 'ShardResourceVersion is the resourceVersion from which the tenant\'s changes are made on its current shard (set by a move; earlier resourceVersions are the history it brought along).',
    },
    moveGeneration: {
      type: 'string',
      description: 'MoveGeneration is the generation of the tenant\'s latest move between shards: every step of a mover of an older generation fails and changes nothing.',
    },
    usage: {
      type: 'object',
      description: 'Usage is what the tenant holds, counted exactly by every write and reported here within seconds; spec.limits are enforced on these counts.',
      properties: {
        objects: { type: 'integer', format: 'int64', description: 'Objects in the tenant, of every kind.' },
        bytes: { type: 'integer', format: 'int64', description: 'Bytes of the stored objects (the size of their stored jsonb).' },
        objectsPerResource: {
          type: 'object',
          description: 'Objects per resource, named "<resource>" or "<resource>.<group>" as ResourceQuota\'s count/ names.',
          additionalProperties: { type: 'integer', format: 'int64' },
        },
      },
    },
    snapshots: {
      type: 'object',
      description: 'Snapshots reports the scheduled snapshots: the last run and the newest snapshot written.',
      properties: {
        lastScheduleTime: { ...timeSchema, description: 'LastScheduleTime is when the schedule last started a snapshot.' },
        lastSuccessfulTime: { ...timeSchema, description: 'LastSuccessfulTime is when the newest snapshot was written.' },
        location: { type: 'string', description: 'Location of the newest snapshot in the snapshot target.' },
        revision: { type: 'integer', format: 'int64', description: 'Revision the newest snapshot is consistent at.' },
        bytes: { type: 'integer', format: 'int64', description: 'Bytes of the newest snapshot.' },
        objects: { type: 'integer', format: 'int64', description: 'Objects in the newest snapshot.' },
      },
    },
    conditions: {
      type: 'array',
      description: 'Conditions of the tenant: Ready, and while it is deleted, ContentDeleted; SnapshotSucceeded for scheduled snapshots, SourceRestored for spec.source.',
      items: tenantConditionSchema,
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['type'],
    },
  },
};

/** tenancy.plinth.dev/v1alpha1 Tenant. */
export const tenantSchema: StructuralSchema = {
  type: 'object',
  description:
    'Tenant is a logical cluster of the platform, served at /clusters/<name>: its own namespaces, objects, roles and custom resources, invisible to every other tenant.',
  properties: {
    ...typeMetaProperties(),
    metadata: objectMetaProperty(),
    spec: { ...tenantSpecSchema, description: 'Spec is what the platform administrator asks for the tenant.' },
    status: { ...tenantStatusSchema, description: 'Status is the observed state of the tenant.' },
  },
};
