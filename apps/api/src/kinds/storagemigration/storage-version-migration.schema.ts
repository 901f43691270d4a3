import type { StructuralSchema } from '@plinth/apimachinery';
import { objectMetaProperty, timeSchema, typeMetaProperties } from '../../schema/object-meta.schema.js';

/** The API group of StorageVersionMigration. */
export const STORAGE_MIGRATION_GROUP = 'storagemigration.k8s.io';
/** The version upstream 1.35 serves (beta, introduced in 1.35). */
export const STORAGE_MIGRATION_VERSION = 'v1beta1';
/** Where StorageVersionMigration objects are stored. */
export const STORAGE_MIGRATION_STORAGE_RESOURCE = `${STORAGE_MIGRATION_GROUP}/storageversionmigrations`;

/** metav1.GroupResource. */
const groupResourceSchema: StructuralSchema = {
  type: 'object',
  description: 'GroupResource specifies a Group and a Resource, but does not force a version.  This is useful for identifying concepts during lookup stages without having partially valid types',
  required: ['group', 'resource'],
  properties: {
    group: { type: 'string', default: '' },
    resource: { type: 'string', default: '' },
  },
};

/** metav1.Condition. */
const conditionSchema: StructuralSchema = {
  type: 'object',
  description: 'Condition contains details for one aspect of the current state of this API Resource.',
  required: ['type', 'status', 'lastTransitionTime', 'reason', 'message'],
  properties: {
    lastTransitionTime: { ...timeSchema, description: 'lastTransitionTime is the last time the condition transitioned from one status to another. This should be when the underlying condition changed.  If that is not known, then using the time when the API field changed is acceptable.' },
    message: { type: 'string', default: '', description: 'message is a human readable message indicating details about the transition. This may be an empty string.' },
    observedGeneration: { type: 'integer', format: 'int64', description: 'observedGeneration represents the .metadata.generation that the condition was set based upon.' },
    reason: { type: 'string', default: '', description: "reason contains a programmatic identifier indicating the reason for the condition's last transition." },
    status: { type: 'string', default: '', description: 'status of the condition, one of True, False, Unknown.' },
    type: { type: 'string', default: '', description: 'type of condition in CamelCase or in foo.example.com/CamelCase.' },
  },
};

/** storagemigration.k8s.io/v1beta1 StorageVersionMigration. */
export const storageVersionMigrationSchema: StructuralSchema = {
  type: 'object',
  description: 'StorageVersionMigration represents a migration of stored data to the latest storage version.',
  properties: {
    ...typeMetaProperties(),
    metadata: objectMetaProperty(),
    spec: {
      type: 'object',
      description: 'Specification of the migration.',
      required: ['resource'],
      properties: {
        resource: { ...groupResourceSchema, description: 'The resource that is being migrated. The migrator sends requests to the endpoint serving the resource. Immutable.' },
      },
    },
    status: {
      type: 'object',
      description: 'Status of the migration.',
      properties: {
        conditions: {
          type: 'array',
          description: "The latest available observations of the migration's current state.",
          items: conditionSchema,
          'x-kubernetes-list-type': 'map',
          'x-kubernetes-list-map-keys': ['type'],
          'x-kubernetes-patch-strategy': 'merge',
          'x-kubernetes-patch-merge-key': 'type',
        },
        resourceVersion: {
          type: 'string',
          description: 'ResourceVersion to compare with the GC cache for performing the migration. This is the current resource version of given group, version and resource when kube-controller-manager first observes this StorageVersionMigration resource.',
        },
      },
    },
  },
};
